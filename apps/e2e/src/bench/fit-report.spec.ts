import {
  largestConverged,
  nextStepVerdict,
  parseFitBenchArgs,
  projectedLimits,
  renderFitBench,
  stackFigures,
  steadyCpuBetween,
  type FitBaseline,
  type FitBenchMeta,
  type FitSideRun,
  type FitStep,
} from './fit-report.js';

const baseline: FitBaseline = { stackRssMiB: 1_000, stackPssMiB: 800, minMemAvailableMiB: 20_000, memAvailableMiB: 20_000 };

function step(clusters: number, minMemAvailableMiB: number, converged = true): FitStep {
  return {
    clusters,
    ...(converged && { machinesRunningSeconds: 60, clustersAvailableSeconds: 61 }),
    progress: converged ? 'done' : '350/400 Machines Running, 90/100 Clusters Available',
    stackRssMiB: 1_000 + clusters * 20,
    stackPssMiB: 800 + clusters * 15,
    minMemAvailableMiB,
    memAvailableMiB: minMemAvailableMiB + 100,
    load: 2,
  };
}

const meta: FitBenchMeta = {
  workers: 3,
  step: 100,
  cores: 2,
  memoryGiB: 23.5,
  date: '2026-11-25',
  upstreamVersion: 'v1.14.2',
  managementServers: 'kube-apiserver v1.34.4, etcd 3.6.5',
  reserveMiB: 1_024,
  steadyWindowSeconds: 60,
  commit: 'abc1234',
};

const cpu = (cores: number) => ({ cores, top: [{ service: 'sim shared kube-apiserver', cores: cores / 2 }] });

const options = { step: 100, reserveMiB: 1_024, elapsedMinutes: 10, maxMinutes: 60, exited: [] as string[] };

describe('bench:fit', () => {
  it('reads its command line, with defaults, and names a bad value', () => {
    expect(parseFitBenchArgs([])).toEqual({
      sides: ['Capstan', 'upstream'],
      step: 100,
      workers: 3,
      stepTimeoutMinutes: 20,
      maxMinutes: 60,
      reserveMiB: 1024,
    });
    expect(parseFitBenchArgs(['--sides', 'all-in-one', '--step', '50', '--max-minutes', '30']).sides).toEqual(['Capstan all-in-one']);
    expect(() => parseFitBenchArgs(['--step', '0'])).toThrow('--step wants positive whole numbers, not "0"');
    expect(() => parseFitBenchArgs(['--sides', 'kubeadm'])).toThrow('--sides: "kubeadm" is not capstan, all-in-one or upstream');
  });

  it('starts the first step, and the next while the last step per cluster, a quarter more, fits above the reserve', () => {
    expect(nextStepVerdict(baseline, [], options)).toEqual({ go: true, projectedMiB: 0 });
    // 20,000 -> 18,000 for 100 clusters: 20 MiB each, 2,500 for the next 100; 16,976 available above the reserve.
    expect(nextStepVerdict(baseline, [step(100, 18_000)], options)).toEqual({ go: true, projectedMiB: 2_500 });
    // The step before, not the idle reading, is what the last step is measured from.
    expect(nextStepVerdict(baseline, [step(100, 18_000), step(200, 17_000)], options)).toEqual({ go: true, projectedMiB: 1_250 });
  });

  it('stops when the next step would cut into the reserve, saying what it would need and what was left', () => {
    const verdict = nextStepVerdict(baseline, [step(100, 12_000), step(200, 4_000)], options);
    expect(verdict).toEqual({
      go: false,
      reason:
        'the next 100 clusters would need about 10,000 MiB (the last step\'s 80.0 MiB per cluster, and a quarter more); ' +
        '2,976 MiB were available above the 1,024 MiB reserve',
    });
  });

  it('stops after a step that did not converge, a process that exited, or the time budget', () => {
    expect(nextStepVerdict(baseline, [step(100, 18_000), step(200, 16_000, false)], options)).toEqual({
      go: false,
      reason: 'the step to 200 clusters did not converge in time (350/400 Machines Running, 90/100 Clusters Available)',
    });
    expect(nextStepVerdict(baseline, [step(100, 18_000)], { ...options, exited: ['core'] })).toEqual({
      go: false,
      reason: 'a process exited: core',
    });
    expect(nextStepVerdict(baseline, [step(100, 18_000)], { ...options, elapsedMinutes: 60 })).toEqual({
      go: false,
      reason: 'the time budget (60 min) ran out; memory was not the limit',
    });
  });

  it('reports the largest N that converged, not the step that did not', () => {
    const run: FitSideRun = {
      side: 'Capstan',
      baseline,
      steps: [step(100, 18_000), step(200, 16_000), step(300, 14_000, false)],
      stoppedBecause: 'the step to 300 clusters did not converge in time (...)',
      minutes: 42,
    };
    expect(largestConverged(run)).toBe(200);
    expect(largestConverged({ ...run, steps: [step(100, 18_000, false)] })).toBe(0);
    const text = renderFitBench([run], meta);
    // 2,000 MiB per 100 clusters: 14,976 MiB above the reserve at 200 is 748 more. No steady CPU recorded: no CPU bound.
    expect(text).toContain('| Capstan | 200 | the step to 300 clusters did not converge in time (...) | 5,000 / 3,800 | 16,000 | - | 948 / - | 42 |');
    expect(text).toContain('| 0 (idle) | - | - | 1,000 | 800 | - | 20,000 | - | - |');
    expect(text).toContain('| 200 | 60.0 | 61.0 | 5,000 | 3,800 | 15.0 | 16,000 | - | 2.00 |');
    expect(text).toContain('| 300 | - | - | 7,000 | 5,300 | 15.0 | 14,000 | - | 2.00 |');
    expect(text).toContain('Last step: 350/400 Machines Running, 90/100 Clusters Available.');
    expect(text).toContain('over 60 s once a step converged');
    expect(text).not.toContain('RSS by process');
    expect(text).not.toContain('Steady CPU at');
    const withProcesses = {
      ...run,
      baseline: { ...baseline, steadyCpu: cpu(0.1) },
      steps: run.steps.map((s) =>
        s.clusters === 200 ? { ...s, processes: [{ service: 'core', rssMiB: 1_068.4 }, { service: 'etcd', rssMiB: 300 }], steadyCpu: cpu(0.5) } : s,
      ),
    };
    const detailed = renderFitBench([withProcesses], meta);
    expect(detailed).toContain('RSS by process at 200 clusters (MiB): core 1,068, etcd 300.');
    expect(detailed).toContain('Steady CPU at 200 clusters, largest first (cores): sim shared kube-apiserver 0.25.');
    expect(detailed).toContain('| 0 (idle) | - | - | 1,000 | 800 | - | 20,000 | 0.10 | - |');
    expect(detailed).toContain('| 200 | 60.0 | 61.0 | 5,000 | 3,800 | 15.0 | 16,000 | 0.50 | 2.00 |');
    // The step at 100 has no steady CPU, so the CPU bound has nothing to continue from.
    expect(detailed).toContain('| 948 / - |');
  });

  it('reads steady CPU between two readings: a process that started within the window counts whole, one that exited not at all', () => {
    const before = [
      { key: '1', service: 'core', cpuSeconds: 100 },
      { key: '2', service: 'etcd', cpuSeconds: 50 },
      { key: '3', service: 'gone', cpuSeconds: 5 },
    ];
    const after = [
      { key: '1', service: 'core', cpuSeconds: 130 },
      { key: '2', service: 'etcd', cpuSeconds: 56 },
      { key: '4', service: 'sim etcd', cpuSeconds: 12 },
      { key: '5', service: 'unreadable', cpuSeconds: Number.NaN },
    ];
    const steady = steadyCpuBetween(before, after, 60, 2);
    expect(steady.cores).toBeCloseTo(0.8, 9);
    expect(steady.top).toEqual([
      { service: 'core', cores: 0.5 },
      { service: 'sim etcd', cores: 0.2 },
    ]);
  });

  it('projects where memory and CPU would run out from the last two converged steps, and only when they rise', () => {
    const steps = [
      { ...step(100, 18_000), steadyCpu: cpu(0.4) },
      { ...step(200, 17_000), steadyCpu: cpu(0.7) },
      step(300, 10_000, false),
    ];
    // Memory: 10 MiB per cluster from 100 to 200, 15,976 MiB above the reserve -> 1,797 more. CPU: 0.003 cores per
    // cluster, 1.3 cores left of 2 -> 433 more.
    expect(projectedLimits({ baseline, steps }, { cores: 2, reserveMiB: 1_024 })).toEqual({ memoryClusters: 1_797, cpuClusters: 633 });
    // One step: measured from idle.
    expect(projectedLimits({ baseline: { ...baseline, steadyCpu: cpu(0.2) }, steps: [steps[0]!] }, { cores: 2, reserveMiB: 1_024 })).toEqual({
      memoryClusters: 948,
      cpuClusters: 900,
    });
    // Readings that do not rise give no bound; nothing converged gives none.
    expect(projectedLimits({ baseline, steps: [{ ...step(100, 20_000), steadyCpu: cpu(0.1) }] }, { cores: 2, reserveMiB: 1_024 })).toEqual({});
    expect(projectedLimits({ baseline, steps: [step(100, 18_000, false)] }, { cores: 2, reserveMiB: 1_024 })).toEqual({});
  });

  it('sums the stack and lists its processes largest first', () => {
    expect(
      stackFigures([
        { service: 'etcd', rssMiB: 100, pssMiB: 90 },
        { service: 'core', rssMiB: 300, pssMiB: 250.5 },
      ]),
    ).toEqual({
      stackRssMiB: 400,
      stackPssMiB: 340.5,
      processes: [
        { service: 'core', rssMiB: 300 },
        { service: 'etcd', rssMiB: 100 },
      ],
    });
  });
});
