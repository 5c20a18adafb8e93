import { largestConverged, nextStepVerdict, parseFitBenchArgs, renderFitBench, stackFigures, type FitBaseline, type FitSideRun, type FitStep } from './fit-report.js';

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
    const text = renderFitBench([run], {
      workers: 3,
      step: 100,
      cores: 2,
      memoryGiB: 23.5,
      date: '2026-11-25',
      upstreamVersion: 'v1.14.2',
      managementServers: 'kube-apiserver v1.34.4, etcd 3.6.5',
      commit: 'abc1234',
    });
    expect(text).toContain('| Capstan | 200 | the step to 300 clusters did not converge in time (...) | 5,000 / 3,800 | 16,000 | 42 |');
    expect(text).toContain('| 0 (idle) | - | - | 1,000 | 800 | - | 20,000 | - |');
    expect(text).toContain('| 200 | 60.0 | 61.0 | 5,000 | 3,800 | 15.0 | 16,000 | 2.00 |');
    expect(text).toContain('| 300 | - | - | 7,000 | 5,300 | 15.0 | 14,000 | 2.00 |');
    expect(text).toContain('Last step: 350/400 Machines Running, 90/100 Clusters Available.');
    expect(text).not.toContain('RSS by process');
    const withProcesses = { ...run, steps: run.steps.map((s) => (s.clusters === 200 ? { ...s, processes: [{ service: 'core', rssMiB: 1_068.4 }, { service: 'etcd', rssMiB: 300 }] } : s)) };
    expect(renderFitBench([withProcesses], { workers: 3, step: 100, cores: 2, memoryGiB: 23.5, date: 'd', upstreamVersion: 'v', managementServers: 'm' })).toContain(
      'RSS by process at 200 clusters (MiB): core 1,068, etcd 300.',
    );
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
