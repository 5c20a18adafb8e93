import { deployDir, loadKustomization } from '@capstan/manifests';
import { SERVICE_APPS } from './build-context.js';
import { serviceImageTag } from './service-images.js';

interface Deployment {
  kind: string;
  metadata: { name: string };
  spec: { template: { spec: { containers: { image: string; imagePullPolicy?: string }[] } } };
}

describe('the images `npm run images` builds', () => {
  it('are the ones deploy/ runs, and deploy/ never pulls them (they exist only where they were built)', () => {
    const deployments = loadKustomization(deployDir()).filter(
      (m) => m.kind === 'Deployment',
    ) as unknown as Deployment[];
    for (const app of SERVICE_APPS) {
      const container = deployments.find((d) => d.metadata.name === `capstan-${app}`)?.spec.template.spec
        .containers[0];
      expect([app, container?.image, container?.imagePullPolicy]).toEqual([
        app,
        serviceImageTag(app),
        'IfNotPresent',
      ]);
    }
  });
});
