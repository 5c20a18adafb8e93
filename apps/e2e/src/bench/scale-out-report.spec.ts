import { renderScaleOut, type ScaleOutRun } from './scale-out-report.js';

describe('scale-out bench report', () => {
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
