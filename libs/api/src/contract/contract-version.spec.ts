import { buildCrds } from '../crd/generate.js';
import { ContractLabelError, compareKubeVersions, contractFromCrd } from './contract-version.js';

describe('compareKubeVersions', () => {
  it('orders API versions as Kubernetes prioritises them', () => {
    const sorted = ['v1alpha1', 'foo1', 'v1', 'v2beta1', 'v1beta2', 'v1beta1', 'v2', 'foo10'].sort(
      compareKubeVersions,
    );
    expect(sorted).toEqual(['foo10', 'foo1', 'v1alpha1', 'v1beta1', 'v1beta2', 'v2beta1', 'v1', 'v2']);
  });
});

describe('contractFromCrd', () => {
  const crd = (labels: Record<string, string>) => ({
    metadata: { name: 'dockerclusters.infrastructure.cluster.x-k8s.io', labels },
  });

  it('prefers the v1beta2 contract and its newest version', () => {
    expect(
      contractFromCrd(
        crd({
          'cluster.x-k8s.io/v1beta1': 'v1alpha4_v1beta1',
          'cluster.x-k8s.io/v1beta2': 'v1beta1_v1beta2',
        }),
      ),
    ).toEqual({
      contract: 'v1beta2',
      version: 'v1beta2',
    });
  });

  it('falls back to a v1beta1-contract provider', () => {
    expect(contractFromCrd(crd({ 'cluster.x-k8s.io/v1beta1': 'v1alpha3_v1alpha4_v1beta1' }))).toEqual({
      contract: 'v1beta1',
      version: 'v1beta1',
    });
  });

  it('refuses a CRD without contract labels, and v1beta2-only providers under a v1beta1 core', () => {
    expect(() => contractFromCrd(crd({}))).toThrow(ContractLabelError);
    expect(() => contractFromCrd(crd({ 'cluster.x-k8s.io/v1beta2': 'v1beta2' }), 'v1beta1')).toThrow(
      'CRD dockerclusters.infrastructure.cluster.x-k8s.io has no cluster.x-k8s.io/v1beta1 label naming its API versions',
    );
  });

  it("reads Capstan's own provider CRDs as v1beta2-contract v1alpha1", () => {
    const sim = buildCrds().find((c) => c.spec.names.kind === 'SimCluster')!;
    expect(contractFromCrd(sim)).toEqual({ contract: 'v1beta2', version: 'v1alpha1' });
  });
});
