import { applyOrder, deployDir, loadKustomization } from './manifests.js';

describe("deploy/'s apply order", () => {
  const ordered = applyOrder(loadKustomization(deployDir()));
  const position = (kind: string, name: string) =>
    ordered.findIndex((m) => m.kind === kind && m.metadata.name === name);

  it('creates the sim endpoints Service before the cluster-provider, whose pods take its address from it', () => {
    const service = position('Service', 'capstan-sim-endpoints');
    const deployment = position('Deployment', 'capstan-cluster-provider');
    expect(service).toBeGreaterThanOrEqual(0);
    expect(deployment).toBeGreaterThan(service);
  });

  it('puts every workload after every other object, and CRDs and the namespace first', () => {
    const kinds = ordered.map((m) => m.kind);
    const firstWorkload = kinds.findIndex((k) => k === 'Deployment' || k === 'StatefulSet');
    expect(kinds.slice(firstWorkload).every((k) => k === 'Deployment' || k === 'StatefulSet')).toBe(true);
    const lastCrd = kinds.lastIndexOf('CustomResourceDefinition');
    expect(kinds.slice(0, lastCrd + 1).every((k) => k === 'CustomResourceDefinition')).toBe(true);
    expect(kinds[lastCrd + 1]).toBe('Namespace');
  });
});
