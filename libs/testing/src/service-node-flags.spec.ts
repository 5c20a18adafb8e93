import { deployDir, loadKustomization } from '@capstan/manifests';
import { LOCAL_SERVICES, SERVICE_NODE_FLAGS } from './local-services.js';

interface Deployment {
  kind: string;
  metadata: { name: string };
  spec: { template: { spec: { containers: { env?: { name: string; value?: string }[] }[] } } };
}

describe('the V8 flags of the services', () => {
  it('are the same in deploy/ (NODE_OPTIONS) as for local services, for every service', () => {
    const deployments = loadKustomization(deployDir()).filter((m) => m.kind === 'Deployment') as unknown as Deployment[];
    const nodeOptions = new Map(
      deployments.map((d) => [
        d.metadata.name,
        d.spec.template.spec.containers[0]?.env?.find((e) => e.name === 'NODE_OPTIONS')?.value,
      ]),
    );
    for (const service of LOCAL_SERVICES) {
      expect([service, nodeOptions.get(`capstan-${service}`)]).toEqual([service, SERVICE_NODE_FLAGS.join(' ')]);
    }
  });
});
