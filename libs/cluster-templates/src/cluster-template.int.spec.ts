import { parseAllDocuments } from 'yaml';
import { createTestNamespace, type TestNamespace } from '@capstan/testing';
import { deployDir, installCrds, loadKustomization, ManifestApplier, type Manifest } from '@capstan/manifests';
import { generateCluster } from './cluster-template.js';

describe('the sim cluster template', () => {
  let ns: TestNamespace;
  let applier: ManifestApplier;

  beforeAll(async () => {
    ns = await createTestNamespace('template');
    applier = new ManifestApplier(ns.kc);
    await installCrds(ns.kc, applier, loadKustomization(`${deployDir()}/crds`), { fieldManager: 'capstan-test' });
  });
  afterAll(() => ns.delete());

  it('renders objects the API server accepts, for any machine counts', async () => {
    for (const [controlPlane, workers] of [
      [1, 0],
      [3, 2],
    ] as const) {
      const docs = parseAllDocuments(
        generateCluster({
          clusterName: `demo-${controlPlane}-${workers}`,
          infrastructure: 'sim',
          targetNamespace: ns.name,
          kubernetesVersion: 'v1.34.4',
          controlPlaneMachineCount: controlPlane,
          workerMachineCount: workers,
          env: {},
        }),
      ).map((d) => d.toJS() as Manifest);
      const refused: string[] = [];
      for (const doc of docs) {
        await applier.apply(doc, { fieldManager: 'capstan-test', dryRun: true }).catch((error: Error) => refused.push(error.message));
      }
      expect(refused).toEqual([]);
    }
  });
});
