import { procStatCpuTicks, renderScaleOut, sumMetric, vmHwmKiB, type ScaleOutRun } from './scale-out-report.js';

describe('scale-out bench report', () => {
  it('reads utime + stime from /proc/<pid>/stat, even with spaces and parentheses in the name', () => {
    const stat = '4242 (node (x) y) S 1 4242 4242 0 -1 4194560 9000 0 0 0 1234 567 0 0 20 0 11 0 100 1000000 5000 18446744073709551615';
    expect(procStatCpuTicks(stat)).toBe(1234 + 567);
  });

  it('reads VmHWM from /proc/<pid>/status', () => {
    expect(vmHwmKiB('Name:\tnode\nVmPeak:\t 1000 kB\nVmHWM:\t  204800 kB\nVmRSS:\t 100 kB\n')).toBe(204800);
    expect(vmHwmKiB('Name:\tnode\n')).toBeUndefined();
  });

  it('sums every sample of one metric only', () => {
    const text = [
      '# HELP apiserver_request_total x',
      'apiserver_request_total{verb="GET",code="200"} 10',
      'apiserver_request_total{verb="LIST",code="200"} 5.5',
      'apiserver_request_total_other{verb="GET"} 100',
      'apiserver_request_total 1',
    ].join('\n');
    expect(sumMetric(text, 'apiserver_request_total')).toBe(16.5);
  });

  it('renders converged and timed-out runs, never inventing a figure', () => {
    const runs: ScaleOutRun[] = [
      {
        replicas: 1,
        loadBefore: 0.42,
        quietWaitSeconds: 0,
        machinesRunningSeconds: 61.23,
        clustersAvailableSeconds: 70.5,
        progress: '8/8 Running, 2/2 Available',
        deletionSeconds: 12,
        apiRequests: 800,
        windowSeconds: 70.5,
        processes: [
          { service: 'core', replica: 0, cpuSeconds: 10, peakRssMiB: 200, reconciles: 50 },
          { service: 'sim shared kube-apiserver', replica: 0, cpuSeconds: 5, peakRssMiB: 300 },
        ],
      },
      {
        replicas: 2,
        loadBefore: 1.2,
        quietWaitSeconds: 30,
        overlapped: 'chaos.js',
        progress: '5/8 Running, 0/2 Available',
        deletionProgress: '1 Cluster left',
        apiRequests: 900,
        windowSeconds: 900,
        processes: [
          { service: 'core', replica: 0, cpuSeconds: 6, peakRssMiB: 150, reconciles: 30 },
          { service: 'core', replica: 1, cpuSeconds: 0.5, peakRssMiB: 120, reconciles: 0 },
          { service: 'machine-provider', replica: 0, cpuSeconds: Number.NaN },
          { service: 'machine-provider', replica: 1, cpuSeconds: 2 },
          { service: 'sim shared kube-apiserver', replica: 0, cpuSeconds: 4, peakRssMiB: 310 },
        ],
      },
    ];
    const text = renderScaleOut(runs, { clusters: 2, workers: 3, cores: 2, date: '2026-11-24', timeoutMinutes: 15, heartbeat: 'default heartbeats' });
    expect(text).toContain('| 1 | 61.2 s | 70.5 s | 800 (100 per machine) | 12.0 s | 0.42 |');
    expect(text).toContain('| 2 | **not within 15 min** | **not within 15 min** (5/8 Running, 0/2 Available) | 900 (113 per machine) | **not within 15 min** (1 Cluster left) | 1.20 (waited 30 s) **then ran alongside: chaos.js** |');
    expect(text).toContain('| core | 10.0 | 6.5 (6.0 / 0.5) |');
    expect(text).toContain('| core | 50 | 30 (30 / 0) |');
    expect(text).toContain('| machine-provider | - | ? (exited / 2.0) |');
    expect(text).toContain('| sim shared kube-apiserver | 300 | 310 |');
    // The other processes have no reconciles: no row for them in that table.
    expect(text.split('Reconciles')[1]!.split('Peak')[0]).not.toContain('sim shared');
  });
});
