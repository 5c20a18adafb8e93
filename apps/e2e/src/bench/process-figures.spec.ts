import { apiserverRequestsByResource, countsSince, logErrorSummary, memAvailableKiB, procStatCpuTicks, pssKiB, sumMetric, sumMetricBy, vmHwmKiB, vmRssKiB } from './process-figures.js';

describe('benchmark process figures', () => {
  it('reads utime + stime from /proc/<pid>/stat, even with spaces and parentheses in the name', () => {
    const stat = '4242 (node (x) y) S 1 4242 4242 0 -1 4194560 9000 0 0 0 1234 567 0 0 20 0 11 0 100 1000000 5000 18446744073709551615';
    expect(procStatCpuTicks(stat)).toBe(1234 + 567);
  });

  it('reads VmHWM and VmRSS from /proc/<pid>/status', () => {
    const status = 'Name:\tnode\nVmPeak:\t 1000 kB\nVmHWM:\t  204800 kB\nVmRSS:\t 100 kB\n';
    expect(vmHwmKiB(status)).toBe(204800);
    expect(vmRssKiB(status)).toBe(100);
    expect(vmHwmKiB('Name:\tnode\n')).toBeUndefined();
    expect(vmRssKiB('Name:\tnode\n')).toBeUndefined();
  });

  it('reads Pss, not Pss_Anon or Pss_File, from /proc/<pid>/smaps_rollup', () => {
    const rollup = '55f4-7ffc ---p 00000000 00:00 0   [rollup]\nRss:    1704 kB\nPss:     297 kB\nPss_Dirty:  112 kB\nPss_Anon:  112 kB\n';
    expect(pssKiB(rollup)).toBe(297);
    expect(pssKiB('Rss:  1704 kB\nPss_Anon:  112 kB\n')).toBeUndefined();
  });

  it('reads MemAvailable, not MemFree, from /proc/meminfo', () => {
    const meminfo = 'MemTotal:       24620000 kB\nMemFree:         1000000 kB\nMemAvailable:   20480000 kB\nBuffers:  10 kB\n';
    expect(memAvailableKiB(meminfo)).toBe(20_480_000);
    expect(memAvailableKiB('MemTotal:       24620000 kB\nMemFree:         1000000 kB\n')).toBeUndefined();
  });

  const text = [
    '# HELP apiserver_request_total x',
    'apiserver_request_total{code="200",verb="GET"} 10',
    'apiserver_request_total{verb="LIST",code="200"} 5.5',
    'apiserver_request_total{code="201",verb="POST",resource="x"} 3',
    'apiserver_request_total{code="200",subverb="GET",verb="LIST"} 2',
    'apiserver_request_total_other{verb="GET"} 100',
    'apiserver_request_total 1',
  ].join('\n');

  it('sums every sample of one metric only', () => {
    expect(sumMetric(text, 'apiserver_request_total')).toBe(21.5);
  });

  it('sums one metric per value of one label, never taking a longer label name for it', () => {
    expect(sumMetricBy(text, 'apiserver_request_total', 'verb')).toEqual({ GET: 10, LIST: 7.5, POST: 3, '': 1 });
  });

  it('sums API server requests per verb and resource, with the subresource', () => {
    const requests = [
      'apiserver_request_total{code="200",resource="secrets",scope="namespace",verb="GET"} 7',
      'apiserver_request_total{code="404",resource="secrets",scope="namespace",verb="GET"} 2',
      'apiserver_request_total{code="200",resource="machines",subresource="status",verb="PATCH"} 4',
      'apiserver_request_total{code="200",resource="machines",subresource="",verb="PATCH"} 1',
      'apiserver_request_total{code="200",subverb="GET",verb="LIST"} 3',
    ].join('\n');
    expect(apiserverRequestsByResource(requests)).toEqual({ 'GET secrets': 9, 'PATCH machines/status': 4, 'PATCH machines': 1, 'LIST ': 3 });
  });

  it('counts what grew between two readings, keys new since the first included', () => {
    expect(countsSince({ GET: 10, LIST: 5, WATCH: 2 }, { GET: 25, LIST: 5, WATCH: 3, POST: 4 })).toEqual({ GET: 15, WATCH: 1, POST: 4 });
  });

  it('counts pino and klog error lines, commonest message first, numbered cluster names made one', () => {
    const log = [
      '{"level":30,"msg":"fine"}',
      '{"level":50,"msg":"reconcile failed","err":{"message":"conflict on scale-3"}}',
      '{"level":50,"msg":"reconcile failed","err":{"message":"conflict on scale-17"}}',
      'I1124 13:45:00.123456   4242 controller.go:10] "Reconciling" cluster="bench-1"',
      'E1124 13:45:00.123456   4242 controller.go:316] "Reconciler error" err="not \\"ready\\"" cluster="bench-1" reconcileID="a"',
      'E1124 13:45:01.123456   4242 controller.go:316] "Reconciler error" err="not \\"ready\\"" cluster="bench-2" reconcileID="b"',
      'E1124 13:45:02.000000   4242 mux.go:412] "Failed to start listener" address="https://127.0.0.1:20000"',
      '{"level":50 not json',
    ].join('\n');
    expect(logErrorSummary(log)).toEqual({
      count: 6,
      top: [
        ['reconcile failed: conflict on scale-N', 2],
        ['"Reconciler error": not \\"ready\\"', 2],
        ['"Failed to start listener"', 1],
        ['{"level":50 not json', 1],
      ],
    });
  });
});
