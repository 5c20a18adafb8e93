import { generateCluster } from './cluster-template.js';
import {
  controlPlaneReplicasProblem,
  countArgument,
  dnsLabelProblem,
  hasEmbeddedEtcd,
  InvalidClusterError,
  kubernetesVersionProblem,
  renderedProblems,
  variableProblems,
} from './validate.js';

describe('cluster input rules', () => {
  it('takes RFC 1123 labels of at most 63 characters as names', () => {
    for (const ok of ['demo', 'a', '0abc', 'prod-eu-1', 'x'.repeat(63)]) expect(dnsLabelProblem('cluster name', ok)).toBeUndefined();
    for (const bad of ['Demo', 'my_cluster', '-demo', 'demo-', 'a.b', '', 'x'.repeat(64)]) {
      expect(dnsLabelProblem('cluster name', bad)).toMatch(/is not an RFC 1123 label: at most 63 characters/);
    }
    expect(dnsLabelProblem('cluster name', 'x'.repeat(64))).toMatch(/\(it has 64 characters\)$/);
  });

  it('takes vX.Y.Z with an optional +k3sN as a Kubernetes version', () => {
    for (const ok of ['v1.34.4', 'v1.34.4+k3s1', 'v1.35.0+k3s12']) expect(kubernetesVersionProblem('version', ok)).toBeUndefined();
    for (const bad of ['banana', '1.34.4', 'v1.34', 'v1.34.4+rke2r1', 'v1.34.4-rc.1', 'v1.34.4+k3s']) {
      expect(kubernetesVersionProblem('version', bad)).toMatch(/is not a Kubernetes version: a semantic version vX\.Y\.Z, optionally with a K3s release \+k3sN/);
    }
  });

  it('refuses an even control plane count with the etcd quorum rule', () => {
    expect(controlPlaneReplicasProblem('count', 1)).toBeUndefined();
    expect(controlPlaneReplicasProblem('count', 5)).toBeUndefined();
    expect(controlPlaneReplicasProblem('count', 2)).toMatch(/count is 2, but a K3s control plane runs embedded etcd and needs an odd number of machines \(1, 3, 5, \.\.\.\) for quorum/);
    expect(controlPlaneReplicasProblem('count', 0)).toMatch(/odd number/);
  });

  it('knows K3sControlPlane runs embedded etcd, and nothing else', () => {
    expect(hasEmbeddedEtcd({ apiGroup: 'controlplane.capstan.dev', kind: 'K3sControlPlane' })).toBe(true);
    expect(hasEmbeddedEtcd({ apiGroup: 'controlplane.cluster.x-k8s.io', kind: 'KubeadmControlPlane' })).toBe(false);
  });

  it('parses count flags as whole numbers and refuses the rest with the rule, as an InvalidClusterError', () => {
    const parse = countArgument('--worker-machine-count');
    expect(parse('0')).toBe(0);
    expect(parse('12')).toBe(12);
    for (const bad of ['-1', '1.5', 'two', '']) {
      expect(() => parse(bad)).toThrow(InvalidClusterError);
      expect(() => parse(bad)).toThrow(/--worker-machine-count must be a whole number of machines, 0 or more/);
    }
    expect(() => parse('-1')).toThrow(InvalidClusterError);
  });

  it('checks every resolved variable and reports all problems at once', () => {
    expect(variableProblems({ CLUSTER_NAME: 'demo', NAMESPACE: 'default', KUBERNETES_VERSION: 'v1.34.4', CONTROL_PLANE_MACHINE_COUNT: '3', WORKER_MACHINE_COUNT: '0' })).toEqual([]);
    const problems = variableProblems({ CLUSTER_NAME: 'Demo', NAMESPACE: 'Fleet_1', KUBERNETES_VERSION: 'banana', WORKER_MACHINE_COUNT: '-2' });
    expect(problems).toHaveLength(4);
    expect(problems[1]).toMatch(/^namespace \(--target-namespace, NAMESPACE\) "Fleet_1"/);
    expect(problems[3]).toMatch(/^--worker-machine-count \(WORKER_MACHINE_COUNT\) must be a whole number/);
    expect(new InvalidClusterError(problems).message).toMatch(/^4 problems:\n {2}- cluster name "Demo"/);
  });

  it('finds an even K3sControlPlane in rendered objects, wherever its count came from', () => {
    const kcp = (replicas: number) =>
      `apiVersion: controlplane.capstan.dev/v1alpha1\nkind: K3sControlPlane\nmetadata:\n  name: demo-control-plane\nspec:\n  replicas: ${replicas}\n`;
    const md = 'apiVersion: cluster.x-k8s.io/v1beta2\nkind: MachineDeployment\nmetadata:\n  name: demo-md-0\nspec:\n  replicas: 2\n';
    expect(renderedProblems(`${kcp(3)}---\n${md}`)).toEqual([]);
    expect(renderedProblems(`${kcp(4)}---\n${md}`)).toEqual([expect.stringMatching(/CONTROL_PLANE_MACHINE_COUNT\) of K3sControlPlane demo-control-plane is 4, but .* odd number/)]);
    expect(renderedProblems('not: [yaml')).toEqual([]);
  });
});

describe('generate cluster refuses what would be refused later', () => {
  const base = { clusterName: 'demo', infrastructure: 'sim', kubernetesVersion: 'v1.34.4', env: {} };
  const refusal = (options: Partial<Parameters<typeof generateCluster>[0]>): string => {
    try {
      generateCluster({ ...base, ...options });
    } catch (error) {
      expect(error).toBeInstanceOf(InvalidClusterError);
      return (error as Error).message;
    }
    throw new Error('generateCluster accepted it');
  };

  it('names the rule for each bad input', () => {
    expect(refusal({ clusterName: 'My_Cluster' })).toMatch(/cluster name "My_Cluster" is not an RFC 1123 label/);
    expect(refusal({ clusterName: 'c'.repeat(64) })).toMatch(/at most 63 characters.*\(it has 64 characters\)/);
    expect(refusal({ kubernetesVersion: 'banana' })).toMatch(/"banana" is not a Kubernetes version/);
    expect(refusal({ controlPlaneMachineCount: 2 })).toMatch(/is 2, but a K3s control plane runs embedded etcd and needs an odd number/);
    expect(refusal({ controlPlaneMachineCount: 0 })).toMatch(/is 0, but .* odd number/);
    expect(refusal({ targetNamespace: 'Not.A.Label' })).toMatch(/namespace .* "Not\.A\.Label" is not an RFC 1123 label/);
  });

  it('checks values from the environment too, but only the variables the template uses', () => {
    expect(refusal({ kubernetesVersion: undefined, env: { KUBERNETES_VERSION: 'latest' } })).toMatch(/"latest" is not a Kubernetes version/);
    expect(refusal({ env: { WORKER_MACHINE_COUNT: '-1' } })).toMatch(/WORKER_MACHINE_COUNT\) must be a whole number/);
    expect(generateCluster({ ...base, templateText: 'name: ${CLUSTER_NAME}', env: { KUBERNETES_VERSION: 'banana' } })).toBe('name: demo');
  });

  it('accepts an odd control plane and a +k3s version', () => {
    expect(generateCluster({ ...base, kubernetesVersion: 'v1.34.4+k3s1', controlPlaneMachineCount: 3 })).toContain('replicas: 3');
  });
});
