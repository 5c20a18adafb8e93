import {
  niceStep,
  parseUpstreamBenchArgs,
  renderUpstreamBench,
  renderUpstreamSvg,
  sideTotals,
  upstreamReportName,
  type SideRun,
  type UpstreamBenchMeta,
} from './upstream-report.js';

const meta: UpstreamBenchMeta = {
  workers: 3,
  cores: 2,
  memoryGiB: 23.5,
  date: '2026-11-24',
  timeoutMinutes: 20,
  upstreamVersion: 'v1.14.2',
  kubernetesVersion: 'v1.34.4',
  managementServers: 'kube-apiserver v1.34.4, etcd 3.6.16',
  commit: 'abc1234',
};

const capstan: SideRun = {
  side: 'Capstan',
  clusters: 2,
  loadBefore: 0.42,
  quietWaitSeconds: 0,
  loadAtCreate: 0.8,
  machinesRunningSeconds: 12.34,
  clustersAvailableSeconds: 13,
  progress: '8/8 Machines Running, 2/2 Clusters Available',
  machinesGoneSeconds: 5,
  clustersGoneSeconds: 6.5,
  requestsByVerb: { WATCH: 20, GET: 100, POST: 40, PATCH: 30 },
  requestsByResource: { 'GET secrets': 90, 'GET leases': 10, 'POST events': 40, 'PATCH machines/status': 30, 'WATCH machines': 20 },
  createRequestsByResource: { 'GET secrets': 70, 'POST events': 30, 'PATCH machines/status': 20 },
  reconcilesByController: { machine: 40, k3sconfig: 25, cluster: 12 },
  createRequestsByClient: {
    'capstan-core': { total: 70, byRequest: { 'GET secrets': 70 } },
    'capstan-node-agent': { total: 30, byRequest: { 'PUT secrets': 30 } },
  },
  windowSeconds: 20,
  processes: [
    { service: 'core', role: 'controller', cpuSeconds: 3, idleRssMiB: 100, peakRssMiB: 150, idlePssMiB: 60, peakPssMiB: 110 },
    { service: 'machine-provider', role: 'controller', cpuSeconds: 4, idleRssMiB: 110, peakRssMiB: 170, idlePssMiB: 70, peakPssMiB: 125 },
    { service: 'sim shared kube-apiserver', role: 'stand-in', cpuSeconds: 6, peakRssMiB: 300, startedDuringRun: true },
    { service: 'sim etcd', role: 'stand-in', cpuSeconds: 1, peakRssMiB: 50, startedDuringRun: true },
    { service: 'management kube-apiserver', role: 'management', cpuSeconds: 9.5, peakRssMiB: 400 },
    { service: 'management etcd', role: 'management', cpuSeconds: 2 },
  ],
};

const upstream: SideRun = {
  side: 'upstream',
  clusters: 2,
  loadBefore: 1.2,
  quietWaitSeconds: 30,
  loadAtCreate: 1.9,
  notQuiet: 'load 1.60',
  progress: '5/8 Machines Running, 0/2 Clusters Available',
  deletionProgress: '1 Clusters, 0 Machines left',
  machinesGoneSeconds: 8,
  requestsByVerb: { GET: 50, LIST: 10, APPLY: 1 },
  windowSeconds: 2400,
  processes: [
    { service: 'upstream-core', role: 'controller', cpuSeconds: 2, idleRssMiB: 40, peakRssMiB: 60 },
    { service: 'upstream-kubeadm-bootstrap', role: 'controller', cpuSeconds: Number.NaN, idleRssMiB: 30 },
    { service: 'upstream-docker (in-memory)', role: 'stand-in', cpuSeconds: 5, idleRssMiB: 45, peakRssMiB: 90 },
    { service: 'management kube-apiserver', role: 'management', cpuSeconds: 7 },
  ],
};

describe('bench:upstream report', () => {
  it('reads its options, with defaults, and refuses what is not a positive whole number', () => {
    expect(parseUpstreamBenchArgs([])).toEqual({
      clusters: [10, 30],
      workers: 3,
      timeoutMinutes: 20,
      sides: ['Capstan', 'Capstan all-in-one', 'upstream'],
      topology: false,
    });
    expect(parseUpstreamBenchArgs(['--clusters', '2', '--workers=1', '--timeout-minutes', '5', '--sides', 'capstan'])).toEqual({
      clusters: [2],
      workers: 1,
      timeoutMinutes: 5,
      sides: ['Capstan'],
      topology: false,
    });
    expect(parseUpstreamBenchArgs(['--topology', '--clusters', '5', '--sides', 'capstan,upstream'])).toMatchObject({
      clusters: [5],
      sides: ['Capstan', 'upstream'],
      topology: true,
    });
    expect(() => parseUpstreamBenchArgs(['--topology=yes'])).toThrow();
    expect(() => parseUpstreamBenchArgs(['--sides', 'capstan,kind'])).toThrow('--sides');
    expect(parseUpstreamBenchArgs(['--sides', 'upstream,all-in-one']).sides).toEqual(['upstream', 'Capstan all-in-one']);
    expect(parseUpstreamBenchArgs(['--clusters', '10, 30,100'])).toMatchObject({ clusters: [10, 30, 100] });
    expect(() => parseUpstreamBenchArgs(['--clusters', '10,x'])).toThrow('--clusters');
    expect(() => parseUpstreamBenchArgs(['--workers', '0'])).toThrow('--workers');
    expect(() => parseUpstreamBenchArgs(['--replicas', '2'])).toThrow();
  });

  it('totals each role; a stand-in that starts with the first cluster idles at 0; an unreadable figure makes the total unknown', () => {
    expect(sideTotals(capstan)).toEqual({
      controllerIdleMiB: 210,
      controllerPeakMiB: 320,
      controllerIdlePssMiB: 130,
      controllerPeakPssMiB: 235,
      standInIdleMiB: 0,
      standInPeakMiB: 350,
      controllerCpu: 7,
      standInCpu: 7,
      apiserverCpu: 9.5,
      etcdCpu: 2,
      requests: 190,
      createRequests: 120,
    });
    const t = sideTotals(upstream);
    expect(t.createRequests).toBeUndefined();
    expect(t.controllerIdleMiB).toBe(70);
    expect(t.controllerPeakMiB).toBeUndefined();
    // Processes without a PSS reading (one not sampled) leave the PSS totals unknown, not low.
    expect(t.controllerPeakPssMiB).toBeUndefined();
    expect(t.controllerCpu).toBeNaN();
    expect(t.etcdCpu).toBeUndefined();
  });

  it('renders one column per N and side, Capstan first, never inventing a figure', () => {
    const text = renderUpstreamBench([upstream, capstan], meta);
    expect(text).toContain('| | N=2 Capstan | N=2 upstream |');
    expect(text).toContain('| create -> every Machine Running | 12.3 s | **not within 20 min** (5/8 Machines Running, 0/2 Clusters Available) |');
    // The progress is said once, with the first figure that is missing.
    expect(text).toContain('| create -> every Cluster Available | 13.0 s | **not within 20 min** |');
    expect(text).toContain('| delete -> no Machine left | 5.0 s | 8.0 s |');
    expect(text).toContain('| delete -> no Cluster left | 6.5 s | **not within 20 min** (1 Clusters, 0 Machines left) |');
    expect(text).toContain('| management API requests, create until every Cluster Available | 120 (15 per machine) | ? |');
    expect(text).toContain('| management API requests, create and delete | 190 (24 per machine) | 61 (8 per machine) |');
    // Verbs: reads, then writes, each with 0 where a side made none.
    const verbs = text.split('\n').filter((l) => l.startsWith('| &nbsp;&nbsp;'));
    expect(verbs).toEqual([
      '| &nbsp;&nbsp;GET | 100 | 50 |',
      '| &nbsp;&nbsp;LIST | 0 | 10 |',
      '| &nbsp;&nbsp;WATCH | 20 | 0 |',
      '| &nbsp;&nbsp;POST | 40 | 0 |',
      '| &nbsp;&nbsp;PATCH | 30 | 0 |',
      '| &nbsp;&nbsp;APPLY | 0 | 1 |',
    ]);
    expect(text).toContain('| controllers RSS peak (MiB) | 320 | ? |');
    expect(text).toContain('| controllers PSS idle (MiB) | 130 | ? |');
    // Requests by resource: only runs that measured them get a column; rows by their largest count.
    const byResource = text.slice(text.indexOf('Management API requests by verb and resource'));
    expect(byResource).toContain('| | N=2 Capstan |');
    expect(byResource.split('\n').filter((l) => l.startsWith('| GET') || l.startsWith('| POST') || l.startsWith('| PATCH') || l.startsWith('| WATCH'))).toEqual([
      '| GET secrets | 90 |',
      '| POST events | 40 |',
      '| PATCH machines/status | 30 |',
      '| WATCH machines | 20 |',
      '| GET leases | 10 |',
    ]);
    // Reconciles by controller: the same shape, after the requests.
    const reconciles = text.slice(text.indexOf('Reconciles by controller'));
    expect(text.indexOf('Reconciles by controller')).toBeGreaterThan(text.indexOf('Management API requests by verb and resource'));
    expect(reconciles.split('\n').slice(0, 7)).toEqual([
      "Reconciles by controller, first create until every Cluster Available (each run's 10 largest):",
      '',
      '| | N=2 Capstan |',
      '|---|---|',
      '| machine | 40 |',
      '| k3sconfig | 25 |',
      '| cluster | 12 |',
    ]);
    // Requests by client (the audit log's): totals, before the reconciles.
    const byClient = text.slice(text.indexOf('Management API requests by client'));
    expect(text.indexOf('Management API requests by client')).toBeLessThan(text.indexOf('Reconciles by controller'));
    expect(byClient.split('\n').slice(0, 6)).toEqual([
      "Management API requests by client, first create until every Cluster Available (each run's 10 largest):",
      '',
      '| | N=2 Capstan |',
      '|---|---|',
      '| capstan-core | 70 |',
      '| capstan-node-agent | 30 |',
    ]);
    expect(text).toContain('| controllers PSS peak, sampled each second (MiB) | 235 | ? |');
    expect(text).toContain('| stand-in RSS idle (MiB) | 0 (starts with the first cluster) | 45 |');
    expect(text).toContain('| controllers CPU s | 7.0 | ? |');
    expect(text).toContain('| management etcd CPU s | 2.0 | ? |');
    expect(text).toContain('| 1-min load: quiet wait, first create | 0.42, 0.80 at the first create | 1.20 (waited 30 s), 1.90 at the first create **not quiet: load 1.60** |');
    expect(text).toContain('| sim shared kube-apiserver (stand-in) | 6.0 s, started in the run -> 300 MiB |');
    expect(text).toContain('| upstream-kubeadm-bootstrap (controller) | ? s |');
    expect(text).toContain('| management kube-apiserver (management) | 7.0 s |');
    expect(text).toContain('commit abc1234');
    expect(text).not.toContain('ClusterClass');
  });

  it('says when the clusters came from a ClusterClass, and writes that variant under its own name', () => {
    const heading = renderUpstreamBench([capstan, upstream], { ...meta, topology: true }).split('\n')[0]!;
    expect(heading).toMatch(/^N clusters of 1 control plane machine \+ a MachineDeployment of 3 workers \(clusters from a ClusterClass: /);
    expect(heading).toContain("Capstan's capstan-k3s with simMode shared and provisioningDelaySeconds 0");
    expect(heading).toContain("upstream's in-memory with its DevMachineTemplates' startupDuration 0s");
    expect(renderUpstreamSvg([capstan], { ...meta, topology: true })).toContain('3 workers each, from a ClusterClass)');
    expect(upstreamReportName(true)).toBe('upstream-topology');
    expect(upstreamReportName(false)).toBe('upstream');
  });

  it('picks round axis steps', () => {
    expect(niceStep(30)).toBe(10);
    expect(niceStep(100)).toBe(20);
    expect(niceStep(7)).toBe(2);
    expect(niceStep(0.4)).toBe(0.1);
    expect(niceStep(0)).toBe(1);
  });

  it('draws both sides in both panels, a line once a side has two points, no point for a run that did not finish', () => {
    const at30: SideRun[] = [
      { ...capstan, clusters: 30, machinesRunningSeconds: 60 },
      { ...upstream, clusters: 30, machinesRunningSeconds: 90 },
    ];
    const svg = renderUpstreamSvg([capstan, upstream, ...at30], meta);
    expect(svg.startsWith('<svg xmlns="http://www.w3.org/2000/svg"')).toBe(true);
    expect(svg.trimEnd().endsWith('</svg>')).toBe(true);
    expect(svg).toContain('create -&gt; every Machine Running');
    // Time panel: Capstan at 2 and 30, upstream at 30 only (its N=2 run did not finish): one line, Capstan's.
    // Memory panel: Capstan at 2 and 30, upstream none (a peak unknown): one line.
    expect(svg.match(/<polyline/g)).toHaveLength(2);
    expect(svg.match(/<circle/g)).toHaveLength(3 + 2 + 2);
    expect(svg).toContain('>90<');
    expect(svg).toContain('upstream Cluster API v1.14.2 (in-memory)');
  });
});
