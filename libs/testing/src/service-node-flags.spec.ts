import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { deployDir, loadKustomization } from '@capstan/manifests';
import { ALL_IN_ONE_NODE_FLAGS, LOCAL_SERVICES, SERVICE_ENV, SERVICE_NODE_FLAGS } from './local-services.js';

interface Deployment {
  kind: string;
  metadata: { name: string };
  spec: { template: { spec: { containers: { env?: { name: string; value?: string }[] }[] } } };
}

describe('the V8 flags of the services', () => {
  it('are the same in deploy/ (CAPSTAN_NODE_FLAGS) as for local services, for every service', () => {
    const deployments = loadKustomization(deployDir()).filter((m) => m.kind === 'Deployment') as unknown as Deployment[];
    const nodeOptions = new Map(
      deployments.map((d) => [
        d.metadata.name,
        d.spec.template.spec.containers[0]?.env?.find((e) => e.name === 'CAPSTAN_NODE_FLAGS')?.value,
      ]),
    );
    for (const service of LOCAL_SERVICES) {
      expect([service, nodeOptions.get(`capstan-${service}`)]).toEqual([service, SERVICE_NODE_FLAGS.join(' ')]);
    }
  });

  it('give the all-in-one the services\' flags and V8\'s size optimization', () => {
    expect(ALL_IN_ONE_NODE_FLAGS).toEqual([...SERVICE_NODE_FLAGS, '--optimize-for-size']);
  });

  it('set the same malloc arenas in the image as for local services', () => {
    const dockerfile = readFileSync(join(deployDir(), '..', 'Dockerfile'), 'utf8');
    for (const [name, value] of Object.entries(SERVICE_ENV)) expect(dockerfile).toContain(`ENV ${name}=${value}\n`);
  });

  it("reach node's command line in the image (the entrypoint puts CAPSTAN_NODE_FLAGS before the main module)", () => {
    const dockerfile = readFileSync(join(deployDir(), '..', 'Dockerfile'), 'utf8');
    const entrypoint = dockerfile.split('\n').find((line) => line.startsWith('ENTRYPOINT'));
    expect(entrypoint).toContain('exec node $CAPSTAN_NODE_FLAGS apps/$APP/dist/main.js');
  });
});
