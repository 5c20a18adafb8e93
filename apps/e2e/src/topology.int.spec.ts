import 'reflect-metadata';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { parseAllDocuments } from 'yaml';
import {
  getCondition,
  LABELS,
  RESOURCES,
  type Cluster,
  type ClusterResourceSetBinding,
  type Machine,
  type MachineDeployment,
  type MachineSet,
} from '@capstan/api';
import { createKubeClient, type KubeClient } from '@capstan/kube';
import { ManifestApplier, type Manifest } from '@capstan/manifests';
import { eventually, repoRoot, startCapstan, type CapstanUnderTest } from '@capstan/testing';
import { deleteClusterAndWait, FAST_SIM_ENV, waitForClusterAvailable } from './sim-cluster-fixture.js';

// A managed topology end to end (docs/topology.md): the capstan-k3s ClusterClass as `capstan generate cluster
// --flavor topology` prints it, on the five services with sim machines and real node agents. The Cluster names the
// class and an in-place worker class; the topology controller makes everything else. It must become Available with
// its add-on delivered; a version change must move the control plane first and the workers after it, in place (no
// Machine replaced); a variable change must roll the worker templates.

const CLUSTER = 'topo';
const FROM = 'v1.34.4';
const TO = 'v1.35.4';
const STEP_TIMEOUT_MS = 420_000;
const run = promisify(execFile);

const until = <T>(what: string, probe: () => Promise<T | undefined | false> | T | undefined | false) =>
  eventually(probe, { message: what, timeoutMs: STEP_TIMEOUT_MS, intervalMs: 250 });

describe('a Cluster built from the capstan-k3s ClusterClass', () => {
  let capstan: CapstanUnderTest;
  let client: KubeClient;
  const ns = () => capstan.namespace.name;
  const clusters = () => client.resource<Cluster>(RESOURCES.Cluster);
  const machines = async () =>
    (await client.resource<Machine>(RESOURCES.Machine).list({ namespace: ns() })).items;
  const workers = async () =>
    (await machines()).filter((m) => !(LABELS.controlPlane in (m.metadata.labels ?? {})));
  const deployment = async () =>
    (
      await client.resource<MachineDeployment>(RESOURCES.MachineDeployment).list({
        namespace: ns(),
        labelSelector: `${LABELS.topologyDeploymentName}=md-0`,
      })
    ).items[0];
  const controlPlaneOf = async () => {
    const ref = (await clusters().get({ namespace: ns(), name: CLUSTER })).spec!.controlPlaneRef!;
    return client
      .resource<Manifest>(RESOURCES.K3sControlPlane)
      .get({ namespace: ns(), name: ref.name }) as Promise<
      Manifest & { spec: { version: string }; status?: { version?: string } }
    >;
  };
  const patchTopology = (topology: Record<string, unknown>) =>
    clusters().mergePatch({ namespace: ns(), name: CLUSTER }, { spec: { topology } });

  beforeAll(async () => {
    capstan = await startCapstan('topology', {
      env: { ...FAST_SIM_ENV, CAPSTAN_SIM_NODE_AGENT: 'in-process' },
    });
    client = createKubeClient(capstan.namespace.kc);
    // The in-place worker class, and the control plane in place too (the class variable inPlaceControlPlane): the
    // template's own variables, as `capstan generate cluster` takes them from the environment.
    const inPlace = { ...process.env, WORKER_MACHINE_CLASS: 'in-place-worker', IN_PLACE_CONTROL_PLANE: 'true' };
    const { stdout } = await run(process.execPath, [
      join(repoRoot(), 'apps', 'cli', 'bin', 'capstan.js'),
      'generate',
      'cluster',
      CLUSTER,
      '--flavor',
      'topology',
      '--kubernetes-version',
      FROM,
      '--control-plane-machine-count',
      '1',
      '--worker-machine-count',
      '1',
      '--target-namespace',
      ns(),
    ], { env: inPlace });
    const applier = new ManifestApplier(capstan.namespace.kc);
    for (const doc of parseAllDocuments(stdout)) {
      await applier.apply(doc.toJS() as Manifest, { fieldManager: 'capstan-test' });
    }
  }, STEP_TIMEOUT_MS);

  afterAll(async () => {
    try {
      if (client) await deleteClusterAndWait(client, ns(), CLUSTER);
    } finally {
      await client?.close();
      await capstan?.stop({ keepLogs: process.env['TOPOLOGY_KEEP_LOGS'] === '1' });
      if (process.env['TOPOLOGY_KEEP_LOGS'] === '1') process.stdout.write(`logs: ${capstan?.logDir}\n`);
    }
  }, STEP_TIMEOUT_MS);

  it(
    'provisions to Available from the class, with the topology reconciled and the add-on delivered',
    async () => {
      const cluster = await waitForClusterAvailable(client, ns(), CLUSTER, STEP_TIMEOUT_MS);
      expect(getCondition(cluster.status?.conditions, 'TopologyReconciled')?.status).toBe('True');
      expect(cluster.spec?.infrastructureRef?.kind).toBe('SimCluster');
      const cp = await controlPlaneOf();
      // The CLI writes the K3s release of the version asked for (v1.34.4 -> v1.34.4+k3s1).
      expect(cp.spec).toMatchObject({
        version: `${FROM}+k3s1`,
        replicas: 1,
        rollout: { inPlace: 'Preferred' },
      });
      expect((await deployment())?.spec.rollout?.inPlace).toBe('Preferred');
      const binding = await until('the platform baseline applied', async () => {
        const b = await client
          .resource<ClusterResourceSetBinding>(RESOURCES.ClusterResourceSetBinding)
          .get({ namespace: ns(), name: CLUSTER })
          .catch(() => undefined);
        return b?.spec.bindings?.[0]?.resources?.every((r) => r.applied) && b;
      });
      expect(binding.spec.bindings?.[0]?.clusterResourceSetName).toBe('platform-baseline');
    },
    STEP_TIMEOUT_MS,
  );

  it(
    'upgrades the control plane first, then the workers, in place',
    async () => {
      const before = new Map((await machines()).map((m) => [m.metadata.name, m.metadata.uid]));
      expect(before.size).toBe(2);
      await patchTopology({ version: TO });
      // Each time a worker is seen asking for the new version, the control plane must already run it.
      const seen = await until('the workers asked for the new version', async () => {
        const [cp, ws] = await Promise.all([controlPlaneOf(), workers()]);
        const asked = ws.filter((m) => m.spec.version === TO);
        if (asked.length > 0 && cp.status?.version !== TO)
          throw new Error(`a worker moved to ${TO} while the control plane runs ${cp.status?.version}`);
        return asked.length === ws.length && ws.length > 0 && { cp, ws };
      });
      expect(seen.cp.status?.version).toBe(TO);
      await until('every machine up to date on the new version', async () => {
        const all = await machines();
        return (
          all.length === 2 &&
          all.every(
            (m) => m.spec.version === TO && getCondition(m.status?.conditions, 'UpToDate')?.status === 'True',
          )
        );
      });
      // In place: the same Machines, none replaced.
      const after = new Map((await machines()).map((m) => [m.metadata.name, m.metadata.uid]));
      expect(after).toEqual(before);
      await until('the topology reconciled', async () => {
        const c = await clusters().get({ namespace: ns(), name: CLUSTER });
        return getCondition(c.status?.conditions, 'TopologyReconciled')?.status === 'True';
      });
    },
    STEP_TIMEOUT_MS,
  );

  it(
    'rolls the worker templates when a class variable changes',
    async () => {
      const template = (await deployment())!.spec.template.spec.bootstrap.configRef!.name;
      const cluster = await clusters().get({ namespace: ns(), name: CLUSTER });
      const variables = (cluster.spec!.topology!.variables ?? []).filter(
        (v) => v.name !== 'workerNodeLabels',
      );
      await patchTopology({ variables: [...variables, { name: 'workerNodeLabels', value: ['tier=gold'] }] });
      const rolled = await until('a new bootstrap template copy', async () => {
        const name = (await deployment())?.spec.template.spec.bootstrap.configRef?.name;
        return name !== undefined && name !== template && name;
      });
      const copy = (await client
        .resource<Manifest>(RESOURCES.K3sConfigTemplate)
        .get({ namespace: ns(), name: rolled })) as Manifest & {
        spec: { template: { spec: { agentConfig: { nodeLabels: string[] } } } };
      };
      expect(copy.spec.template.spec.agentConfig.nodeLabels).toEqual(['capstan.dev/pool=md-0', 'tier=gold']);
      // The worker belongs to the MachineSet of the new template (moved there in place, or a replacement), up to date.
      await until('the worker up to date with the new template', async () => {
        const ws = await workers();
        const owner = ws[0]?.metadata.ownerReferences?.find((r) => r.kind === 'MachineSet')?.name;
        if (ws.length !== 1 || !owner) return false;
        const set = await client
          .resource<MachineSet>(RESOURCES.MachineSet)
          .get({ namespace: ns(), name: owner });
        return (
          set.spec.template.spec.bootstrap.configRef?.name === rolled &&
          getCondition(ws[0]!.status?.conditions, 'UpToDate')?.status === 'True'
        );
      });
    },
    STEP_TIMEOUT_MS,
  );
});
