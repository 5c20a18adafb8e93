import { apiServerFilesIn } from './api-server-certificates.js';
import { workloadApiServerArgs, type ApiServerArgsInput } from './api-server-args.js';

const input: ApiServerArgsInput = {
  etcdUrls: ['http://127.0.0.1:2379'],
  etcdPrefix: '/capstan-sim/shared',
  bindAddress: '127.0.0.1',
  advertiseAddress: '127.0.0.1',
  port: 6443,
  files: apiServerFilesIn('/state/shared'),
  serviceCIDR: '10.43.0.0/16',
  clusterDomain: 'cluster.local',
  requestHeaderAllowedNames: ['system:auth-proxy'],
};

describe('workload kube-apiserver arguments', () => {
  it('keeps the watch cache off for a cluster of its own and on where asked (the shared server)', () => {
    expect(workloadApiServerArgs(input)).toContain('--watch-cache=false');
    expect(workloadApiServerArgs({ ...input, watchCache: true })).toContain('--watch-cache=true');
    expect(workloadApiServerArgs({ ...input, watchCache: true }).filter((a) => a.startsWith('--watch-cache'))).toHaveLength(1);
  });
});
