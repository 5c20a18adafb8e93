import 'reflect-metadata';
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { KubeConfig, type V1Node, type V1Secret } from '@kubernetes/client-node';
import { pino } from 'pino';
import {
  INFRASTRUCTURE_GROUP,
  LABELS,
  RESOURCES,
  getCondition,
  type Cluster,
  type K3sConfig,
  type K3sControlPlane,
  type Machine,
  type MachineDeployment,
} from '@capstan/api';
import { createKubeClient, Informer, NODES, SECRETS, type KubeClient, type ResourceType } from '@capstan/kube';
import { eventually, startCapstan, type CapstanUnderTest, type TestNamespace } from '@capstan/testing';
import {
  controlPlaneName,
  createObject,
  createSimK3sCluster,
  createSimMachineTemplate,
  deleteClusterAndWait,
  deploymentName,
} from './sim-cluster-fixture.js';

// In-place upgrade with real parts (docs/in-place-updates.md): the five services, sim machines with real node agents
// applying machine plans, and a workload API server that the install instruction restarts on the new minor. A
// 3 control plane + 2 worker cluster goes from v1.34.4 to v1.35.4 without a Machine, SimMachine or K3sConfig being
// created or deleted; the limits are sampled from watch events (each change of a Machine or Node is seen).

const CLUSTER = 'inplace';
const KCP = controlPlaneName(CLUSTER);
const MD = deploymentName(CLUSTER);
const FROM = 'v1.34.4';
const TO = 'v1.35.4';
const STEP_TIMEOUT_MS = Number(process.env['INPLACE_STEP_MS'] ?? 420_000);

const until = <T>(what: string, probe: () => Promise<T | undefined | false> | T | undefined | false) =>
  eventually(probe, { message: what, timeoutMs: STEP_TIMEOUT_MS, intervalMs: 250 });

const isTrueOn = (m: Machine, type: string) => getCondition(m.status?.conditions, type)?.status === 'True';
const updating = (m: Machine) => isTrueOn(m, 'Updating');
const isControlPlane = (m: Machine) => LABELS.controlPlane in (m.metadata.labels ?? {});

interface Sample {
  updatingControlPlane: number;
  unavailableWorkers: number;
  clusterAvailable: boolean;
}

describe('in-place upgrade of a K3s cluster on sim machines', () => {
  let ns: TestNamespace;
  let capstan: CapstanUnderTest;
  let client: KubeClient;
  let machines: Informer<Machine>;
  let clusters: Informer<Cluster>;
  let workload: KubeClient | undefined;
  let nodes: Informer<V1Node> | undefined;
  const samples: Sample[] = [];
  /** Per node: was it ever unschedulable while its machine updated, and is it schedulable now. */
  const cordoned = new Set<string>();

  const create = (resource: ResourceType, body: Record<string, unknown>) => createObject(client, resource, body);
  const names = async (resource: ResourceType) =>
    (await client.resource(resource).list({ namespace: ns.name })).items
      .map((o) => `${o.metadata?.name}/${o.metadata?.uid}`)
      .sort();

  beforeAll(async () => {
    capstan = await startCapstan('inplace', {
      env: {
        CAPSTAN_SIM_HEARTBEAT_SECONDS: '1',
        CAPSTAN_SIM_NODE_STATUS_SECONDS: '2',
        CAPSTAN_SIM_PROVISIONING_JITTER: '0',
        CAPSTAN_SIM_NODE_AGENT: 'in-process',
      },
    });
    ns = capstan.namespace;
    client = createKubeClient(ns.kc);
    machines = new Informer<Machine>(client, RESOURCES.Machine, { namespace: ns.name });
    clusters = new Informer<Cluster>(client, RESOURCES.Cluster, { namespace: ns.name });
    const record = () => {
      const all = machines.list(ns.name).filter((m) => !m.metadata.deletionTimestamp);
      const cluster = clusters.getByName(ns.name, CLUSTER);
      samples.push({
        updatingControlPlane: all.filter((m) => isControlPlane(m) && updating(m)).length,
        unavailableWorkers: all.filter((m) => !isControlPlane(m) && (updating(m) || !isTrueOn(m, 'Available'))).length,
        clusterAvailable: getCondition(cluster?.status?.conditions, 'Available')?.status === 'True',
      });
    };
    machines.addEventHandler({ onAdd: record, onUpdate: record, onDelete: record });
    clusters.addEventHandler({ onAdd: record, onUpdate: record, onDelete: record });
    machines.start();
    clusters.start();
    await Promise.all([machines.waitForSync(), clusters.waitForSync()]);

    await createSimK3sCluster(client, {
      namespace: ns.name,
      name: CLUSTER,
      version: FROM,
      controlPlaneReplicas: 3,
      workers: 2,
      controlPlaneInPlace: 'Preferred',
      workerRollout: { inPlace: 'Preferred', strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 0, maxUnavailable: 1 } } },
      workerConfig: { agentConfig: { nodeLabels: ['capstan.dev/pool=md-0'] } },
    });
  }, STEP_TIMEOUT_MS);

  afterAll(async () => {
    try {
      if (client) await deleteClusterAndWait(client, ns.name, CLUSTER);
    } finally {
      await nodes?.stop();
      await workload?.close();
      await machines?.stop();
      await clusters?.stop();
      await client?.close();
      await capstan?.stop({ keepLogs: process.env['INPLACE_KEEP_LOGS'] === '1' });
      if (process.env['INPLACE_KEEP_LOGS'] === '1') process.stdout.write(`logs: ${capstan?.logDir}\n`);
    }
  }, STEP_TIMEOUT_MS);

  /** Every machine Running on `version`, up to date, not updating. */
  const converged = (version: string) =>
    until(`every machine up to date on ${version}`, () => {
      const all = machines.list(ns.name);
      if (all.length !== 5) throw new Error(`${all.length} machines`);
      for (const m of all) {
        const state = {
          version: m.spec.version,
          available: isTrueOn(m, 'Available'),
          upToDate: isTrueOn(m, 'UpToDate'),
          updating: updating(m),
          target: m.metadata.annotations?.['in-place.capstan.dev/update-in-progress'],
        };
        if (state.version !== version || !state.available || !state.upToDate || state.updating || state.target) {
          throw new Error(`Machine ${m.metadata.name}: ${JSON.stringify(state)}`);
        }
      }
      return all;
    });

  it(
    'brings the cluster up on v1.34.4 with node agents that applied their first plan',
    async () => {
      await until('the Cluster Available', () => clusters.getByName(ns.name, CLUSTER) && samples.at(-1)?.clusterAvailable);
      await converged(FROM);
      // Every node agent checked in and applied its first plan: in-place updates go through them.
      await until('PlanApplied on every machine', () => machines.list(ns.name).every((m) => isTrueOn(m, 'PlanApplied')));

      const secret = await client.resource<V1Secret>(SECRETS).get({ namespace: ns.name, name: `${CLUSTER}-kubeconfig` });
      const kc = new KubeConfig();
      kc.loadFromString(Buffer.from(secret.data!['value']!, 'base64').toString('utf8'));
      workload = createKubeClient(kc);
      // The workload API server restarts with every server update: its watches ending then is expected, not news.
      // Back within a second of it: the default backoff (from 0.8 s, growing to 45 s while the server stays away) would
      // leave this cache stale after the server is up, and the checks on it waiting for nothing.
      nodes = new Informer<V1Node>(workload, NODES, {
        logger: pino({ level: 'error' }),
        backoff: { initialMs: 250, maxMs: 1_000 },
      });
      const watchCordon = (node: V1Node) => {
        if (node.spec?.unschedulable) cordoned.add(node.metadata!.name!);
      };
      nodes.addEventHandler({ onAdd: watchCordon, onUpdate: (_old, node) => watchCordon(node) });
      nodes.start();
      await nodes.waitForSync();
      await until('5 Ready nodes', () => nodes!.list().filter((n) => n.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')).length === 5);
    },
    STEP_TIMEOUT_MS,
  );

  it(
    'upgrades to v1.35.4 in place: control plane first, one machine at a time, nothing replaced',
    async () => {
      const before = {
        machines: await names(RESOURCES.Machine),
        simMachines: await names(RESOURCES.SimMachine),
        configs: await names(RESOURCES.K3sConfig),
        providerIDs: machines.list(ns.name).map((m) => m.spec.providerID).sort(),
      };
      const start = samples.length;
      await client.resource<K3sControlPlane>(RESOURCES.K3sControlPlane).mergePatch(
        { namespace: ns.name, name: KCP },
        { spec: { version: TO } },
      );
      await until('the control plane on v1.35.4', () =>
        machines.list(ns.name).filter((m) => isControlPlane(m) && m.spec.version === TO && isTrueOn(m, 'UpToDate') && !updating(m)).length === 3,
      );
      await client.resource<MachineDeployment>(RESOURCES.MachineDeployment).mergePatch(
        { namespace: ns.name, name: MD },
        { spec: { template: { spec: { version: TO } } } },
      );
      const after = await converged(TO);

      expect(await names(RESOURCES.Machine)).toEqual(before.machines);
      expect(await names(RESOURCES.SimMachine)).toEqual(before.simMachines);
      expect(await names(RESOURCES.K3sConfig)).toEqual(before.configs);
      expect(after.map((m) => m.spec.providerID).sort()).toEqual(before.providerIDs);

      const during = samples.slice(start);
      expect(Math.max(...during.map((s) => s.updatingControlPlane))).toBe(1);
      expect(Math.max(...during.map((s) => s.unavailableWorkers))).toBeLessThanOrEqual(1);
      expect(during.every((s) => s.clusterAvailable)).toBe(true);

      const nodeList = await until('every node on v1.35.4 and schedulable', () => {
        const list = nodes!.list();
        return list.length === 5 && list.every((n) => n.status?.nodeInfo?.kubeletVersion === `${TO}+k3s1` && !n.spec?.unschedulable) && list;
      });
      // Every node was cordoned for its restart (and is schedulable again, above).
      expect([...cordoned].sort()).toEqual(nodeList.map((n) => n.metadata!.name!).sort());
      const version = await workload!.request<{ gitVersion: string }>({ method: 'GET', path: '/version' });
      expect(version.gitVersion).toMatch(/^v1\.35\./);

      const configs = (await client.resource<K3sConfig>(RESOURCES.K3sConfig).list({ namespace: ns.name })).items;
      expect(configs.every((c) => c.status?.inPlaceUpdate?.state === 'Succeeded')).toBe(true);
    },
    STEP_TIMEOUT_MS * 2,
  );

  const deployments = () => client.resource<MachineDeployment>(RESOURCES.MachineDeployment);
  const rollingOut = async () =>
    getCondition((await deployments().get({ namespace: ns.name, name: MD })).status?.conditions, 'RollingOut');
  const workers = () => machines.list(ns.name).filter((m) => !isControlPlane(m));

  it(
    'under Required, an infrastructure template change replaces nothing and says which field blocks it',
    async () => {
      const before = await names(RESOURCES.Machine);
      await createSimMachineTemplate(client, ns.name, `${MD}-b`);
      await deployments().mergePatch(
        { namespace: ns.name, name: MD },
        {
          spec: {
            rollout: { inPlace: 'Required' },
            template: { spec: { infrastructureRef: { apiGroup: INFRASTRUCTURE_GROUP, kind: 'SimMachineTemplate', name: `${MD}-b` } } },
          },
        },
      );
      const blocked = await until('RollingOut says the rollout is blocked', async () => {
        const condition = await rollingOut();
        return condition?.reason === 'InPlaceUpdateBlocked' && condition;
      });
      expect(blocked.message).toContain('spec.template.spec.infrastructureRef');
      expect(blocked.message).toContain('never applied in place');
      await new Promise((resolve) => setTimeout(resolve, 5_000));
      expect(await names(RESOURCES.Machine)).toEqual(before);

      // Changed back: nothing left to do, nothing was replaced.
      await deployments().mergePatch(
        { namespace: ns.name, name: MD },
        { spec: { template: { spec: { infrastructureRef: { apiGroup: INFRASTRUCTURE_GROUP, kind: 'SimMachineTemplate', name: MD } } } } },
      );
      await until('RollingOut False again', async () => (await rollingOut())?.status === 'False');
      await converged(TO);
      expect(await names(RESOURCES.Machine)).toEqual(before);
    },
    STEP_TIMEOUT_MS,
  );

  it(
    'a failing plan halts the rollout at one machine, and changing the spec back resumes it',
    async () => {
      const before = await names(RESOURCES.Machine);
      // The next minor is allowed in place, but the sim host has no v1.36 to install: the install instruction fails.
      await deployments().mergePatch({ namespace: ns.name, name: MD }, { spec: { template: { spec: { version: 'v1.36.0' } } } });
      const failed = await until('one worker reports its failed update', () => {
        const machine = workers().find((m) => getCondition(m.status?.conditions, 'Updating')?.reason === 'InPlaceUpdateFailed');
        return machine && getCondition(machine.status?.conditions, 'Updating');
      });
      expect(failed.message).toContain('instruction install');
      expect(failed.message).toContain('not available on this host');
      const halted = await until('RollingOut says the rollout is halted', async () => {
        const condition = await rollingOut();
        return condition?.message?.includes('rollout halted') && condition;
      });
      expect(halted.status).toBe('True');
      await new Promise((resolve) => setTimeout(resolve, 5_000));
      // No other machine was touched.
      const touched = workers().filter((m) => m.spec.version === 'v1.36.0' || m.metadata.annotations?.['in-place.capstan.dev/update-in-progress']);
      expect(touched).toHaveLength(1);

      await deployments().mergePatch({ namespace: ns.name, name: MD }, { spec: { template: { spec: { version: TO } } } });
      await converged(TO);
      expect(await names(RESOURCES.Machine)).toEqual(before);
      await until('every node schedulable again', () => nodes!.list().every((n) => !n.spec?.unschedulable));
    },
    STEP_TIMEOUT_MS,
  );

  it(
    'rolls a configuration change out in place through SIGKILLs of the control plane provider, the core and the machine provider',
    async () => {
      const before = await names(RESOURCES.Machine);
      const start = samples.length;
      const configOf = (m: Machine) =>
        readFileSync(join(capstan.simStateDir, 'machines', ns.name, m.metadata.name!, 'etc/rancher/k3s/config.yaml'), 'utf8');
      const inFlight = (which: (m: Machine) => boolean) =>
        until('an update in flight', () =>
          machines.list(ns.name).some((m) => which(m) && m.metadata.annotations?.['in-place.capstan.dev/update-in-progress']),
        );

      // A private registry comes with it: registries.yaml, its credentials from a Secret, written by the same plans.
      const registriesPath = (m: Machine) =>
        join(capstan.simStateDir, 'machines', ns.name, m.metadata.name!, 'etc/rancher/k3s/registries.yaml');
      const registriesOf = (m: Machine) => {
        try {
          return readFileSync(registriesPath(m), 'utf8');
        } catch {
          return '';
        }
      };
      await client.resource<V1Secret>(SECRETS).create({
        metadata: { name: 'registry-auth', namespace: ns.name },
        type: 'kubernetes.io/basic-auth',
        stringData: { username: 'puller', password: 'pull-secret-1' },
      });
      await client.resource<K3sControlPlane>(RESOURCES.K3sControlPlane).mergePatch(
        { namespace: ns.name, name: KCP },
        {
          spec: {
            k3sConfigSpec: {
              serverConfig: { kubeAPIServerArgs: ['event-ttl=2h'] },
              privateRegistriesConfig: {
                mirrors: { 'docker.io': { endpoint: ['https://mirror.capstan.test:5000'] } },
                configs: { 'mirror.capstan.test:5000': { authSecret: { name: 'registry-auth' } } },
              },
            },
          },
        },
      );
      await inFlight(isControlPlane);
      await capstan.killAndRestart('control-plane-provider');
      await until('the control plane reconfigured', () => {
        const cp = machines.list(ns.name).filter(isControlPlane);
        return (
          cp.length === 3 &&
          cp.every(
            (m) =>
              isTrueOn(m, 'UpToDate') &&
              !updating(m) &&
              configOf(m).includes('event-ttl=2h') &&
              registriesOf(m).includes('https://mirror.capstan.test:5000'),
          )
        );
      });
      for (const m of machines.list(ns.name).filter(isControlPlane)) {
        expect(registriesOf(m)).toContain('password: pull-secret-1');
        expect(statSync(registriesPath(m)).mode & 0o777).toBe(0o600);
      }

      await create(RESOURCES.K3sConfigTemplate, {
        metadata: { name: `${MD}-v2`, namespace: ns.name },
        spec: { template: { spec: { agentConfig: { nodeLabels: ['capstan.dev/pool=md-0', 'capstan.dev/tier=v2'] } } } },
      });
      await deployments().mergePatch(
        { namespace: ns.name, name: MD },
        {
          spec: {
            template: {
              spec: { bootstrap: { configRef: { apiGroup: RESOURCES.K3sConfigTemplate.group, kind: 'K3sConfigTemplate', name: `${MD}-v2` } } },
            },
          },
        },
      );
      await inFlight((m) => !isControlPlane(m));
      await capstan.killAndRestart('core');
      await capstan.killAndRestart('machine-provider');
      const after = await converged(TO);
      expect(after.filter((m) => !isControlPlane(m)).every((m) => configOf(m).includes('capstan.dev/tier=v2'))).toBe(true);
      expect(await names(RESOURCES.Machine)).toEqual(before);

      const during = samples.slice(start);
      expect(Math.max(...during.map((s) => s.updatingControlPlane))).toBeLessThanOrEqual(1);
      expect(Math.max(...during.map((s) => s.unavailableWorkers))).toBeLessThanOrEqual(1);
      await until('every node schedulable again', () => {
        const cordonedNodes = nodes!.list().filter((n) => n.spec?.unschedulable).map((n) => n.metadata?.name);
        if (cordonedNodes.length > 0) throw new Error(`cordoned: ${cordonedNodes.join(', ')}`);
        return true;
      });
    },
    STEP_TIMEOUT_MS * 2,
  );
});
