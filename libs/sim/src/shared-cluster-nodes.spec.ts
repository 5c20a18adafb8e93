import { missingSharedClusterLabels, scopeNodeCollection, sharedClusterNodeLabels, sharedClusterNodeSelector } from './shared-cluster-nodes.js';

const selector = sharedClusterNodeSelector('team-a', 'prod');

describe('shared-mode Node scoping', () => {
  it('labels a cluster by its namespace and name, and selects by both', () => {
    expect(sharedClusterNodeLabels('team-a', 'prod')).toEqual({
      'sim.capstan.dev/cluster-namespace': 'team-a',
      'sim.capstan.dev/cluster-name': 'prod',
    });
    expect(selector).toBe('sim.capstan.dev/cluster-namespace=team-a,sim.capstan.dev/cluster-name=prod');
  });

  it('stands a digest in for a name past 63 characters, one per name', () => {
    const long = 'c'.repeat(64);
    const value = sharedClusterNodeLabels('ns', long)['sim.capstan.dev/cluster-name']!;
    expect(value).toMatch(/^sha256-[0-9a-f]{48}$/);
    expect(value.length).toBeLessThanOrEqual(63);
    expect(sharedClusterNodeLabels('ns', `${long}d`)['sim.capstan.dev/cluster-name']).not.toBe(value);
    expect(sharedClusterNodeLabels('ns', 'c'.repeat(63))['sim.capstan.dev/cluster-name']).toBe('c'.repeat(63));
  });

  it('names the shared-cluster labels a Node lacks or has otherwise, and nothing else', () => {
    const wanted = { ...sharedClusterNodeLabels('team-a', 'prod'), 'kubernetes.io/os': 'linux' };
    expect(missingSharedClusterLabels(undefined, wanted)).toEqual(sharedClusterNodeLabels('team-a', 'prod'));
    expect(missingSharedClusterLabels({ 'sim.capstan.dev/cluster-namespace': 'team-a', 'sim.capstan.dev/cluster-name': 'dev' }, wanted)).toEqual({
      'sim.capstan.dev/cluster-name': 'prod',
    });
    expect(missingSharedClusterLabels({ ...sharedClusterNodeLabels('team-a', 'prod') }, wanted)).toBeUndefined();
    // A dedicated-mode Node wants none.
    expect(missingSharedClusterLabels({}, { 'kubernetes.io/os': 'linux' })).toBeUndefined();
  });

  it('adds the selector to lists and watches of Nodes, keeping the query and the client\'s own selector', () => {
    const decoded = (path: string) => new URLSearchParams(path.split('?')[1]);
    expect(decoded(scopeNodeCollection('GET', '/api/v1/nodes', selector)).get('labelSelector')).toBe(selector);
    const watch = scopeNodeCollection('GET', '/api/v1/nodes?watch=true&resourceVersion=42&allowWatchBookmarks=true', selector);
    expect(watch.startsWith('/api/v1/nodes?')).toBe(true);
    expect(Object.fromEntries(decoded(watch))).toEqual({
      watch: 'true',
      resourceVersion: '42',
      allowWatchBookmarks: 'true',
      labelSelector: selector,
    });
    const own = scopeNodeCollection('GET', '/api/v1/nodes?labelSelector=node-role.kubernetes.io%2Fcontrol-plane%3Dtrue', selector);
    expect(decoded(own).get('labelSelector')).toBe(`node-role.kubernetes.io/control-plane=true,${selector}`);
    expect(decoded(scopeNodeCollection('GET', '/api/v1/watch/nodes?timeoutSeconds=30', selector)).get('labelSelector')).toBe(selector);
    expect(decoded(scopeNodeCollection('DELETE', '/api/v1/nodes', selector)).get('labelSelector')).toBe(selector);
  });

  it('leaves one Node, its status, other resources and writes as they came', () => {
    for (const [method, path] of [
      ['GET', '/api/v1/nodes/worker-1'],
      ['PATCH', '/api/v1/nodes/worker-1/status'],
      ['POST', '/api/v1/nodes'],
      ['GET', '/api/v1/namespaces/kube-node-lease/leases'],
      ['GET', '/api/v1/nodesx'],
      ['GET', '/apis/apps/v1/deployments?labelSelector=a%3Db'],
    ] as const) {
      expect(scopeNodeCollection(method, path, selector)).toBe(path);
    }
  });
});
