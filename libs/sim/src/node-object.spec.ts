import {
  nodeLabels,
  readyNodeStatus,
  registrationNode,
  simulatedAddress,
  unknownConditions,
  unreachableTaints,
  withTaints,
  type NodeIdentity,
} from './node-object.js';

const identity = (role: NodeIdentity['role']): NodeIdentity => ({
  name: 'demo-md-0-abc',
  providerID: 'sim://ns/demo-md-0-abc',
  role,
  version: 'v1.34.1+k3s1',
  labels: { 'capstan.dev/pool': 'md-0', 'kubernetes.io/arch': 'arm64' },
  taints: [{ key: 'node.cluster.x-k8s.io/uninitialized', effect: 'NoSchedule' }],
  addresses: [
    { type: 'InternalIP', address: '127.1.2.3' },
    { type: 'Hostname', address: 'demo-md-0-abc' },
  ],
  machineUID: 'e0c2c1b8-3a9c-4d55-9c1c-1f7a1f3c9b10',
});

describe('node objects', () => {
  it('labels servers with K3s role labels and lets node-label entries win', () => {
    expect(nodeLabels(identity('init-server'))).toMatchObject({
      'node-role.kubernetes.io/control-plane': 'true',
      'node-role.kubernetes.io/etcd': 'true',
      'kubernetes.io/hostname': 'demo-md-0-abc',
      'kubernetes.io/arch': 'arm64',
      'capstan.dev/pool': 'md-0',
    });
    expect(nodeLabels(identity('agent'))['node-role.kubernetes.io/control-plane']).toBeUndefined();
  });

  it('registers with the provider ID and the registration taints', () => {
    const node = registrationNode(identity('agent'));
    expect(node.spec).toEqual({
      providerID: 'sim://ns/demo-md-0-abc',
      taints: [{ key: 'node.cluster.x-k8s.io/uninitialized', effect: 'NoSchedule' }],
    });
    expect(node.metadata?.annotations?.['k3s.io/internal-ip']).toBe('127.1.2.3');
  });

  it('reports a ready kubelet and turns every condition Unknown as the node lifecycle controller would', () => {
    const since = new Date('2026-01-01T00:00:00Z');
    const now = new Date('2026-01-01T00:05:00Z');
    const status = readyNodeStatus(identity('agent'), now, since) as {
      conditions: ReturnType<typeof unknownConditions>;
      nodeInfo: Record<string, string>;
    };
    expect(status.conditions.find((c) => c.type === 'Ready')).toMatchObject({
      status: 'True',
      lastHeartbeatTime: '2026-01-01T00:05:00Z',
      lastTransitionTime: '2026-01-01T00:00:00Z',
    });
    expect(status.nodeInfo['kubeletVersion']).toBe('v1.34.1+k3s1');
    const later = new Date('2026-01-01T00:06:00Z');
    const unknown = unknownConditions(status.conditions, later);
    expect(unknown.every((c) => c.status === 'Unknown' && c.reason === 'NodeStatusUnknown')).toBe(true);
    expect(unknown.find((c) => c.type === 'Ready')).toMatchObject({
      lastHeartbeatTime: '2026-01-01T00:05:00Z',
      lastTransitionTime: '2026-01-01T00:06:00Z',
    });
    expect(unknownConditions(unknown, new Date('2026-01-02T00:00:00Z'))[0]!.lastTransitionTime).toBe(
      '2026-01-01T00:06:00Z',
    );
  });

  it('adds the unreachable taints once', () => {
    const now = new Date('2026-01-01T00:00:00Z');
    const once = withTaints([{ key: 'a', effect: 'NoSchedule' }], unreachableTaints(now));
    expect(withTaints(once, unreachableTaints(new Date()))).toEqual(once);
    expect(once.map((t) => `${t.key}:${t.effect}`)).toEqual([
      'a:NoSchedule',
      'node.kubernetes.io/unreachable:NoSchedule',
      'node.kubernetes.io/unreachable:NoExecute',
    ]);
  });

  it('gives each machine a stable loopback address other than 127.0.0.1', () => {
    const address = simulatedAddress('ns', 'machine-a');
    expect(address).toBe(simulatedAddress('ns', 'machine-a'));
    expect(address).toMatch(/^127\.(\d+)\.(\d+)\.(\d+)$/);
    expect(address).not.toBe('127.0.0.1');
    expect(simulatedAddress('ns', 'machine-b')).not.toBe(address);
  });
});
