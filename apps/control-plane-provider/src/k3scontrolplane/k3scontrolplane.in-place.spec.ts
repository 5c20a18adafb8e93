import { IN_PLACE_ANNOTATIONS, RESOURCES, recordedDecision, type K3sConfig, type K3sConfigSpec, type Machine } from '@capstan/api';
import type { CanUpdateMachineRequest, CanUpdateMachineResponse } from '@capstan/events';
import { isConflict, type KubeClient } from '@capstan/kube';
import { InMemoryApiServer } from '@capstan/kube/testing';
import { CONTROL_PLANE_ANNOTATIONS } from '../planning/annotations.js';
import { planControlPlane } from '../planning/planner.js';
import { machineSpecHash } from '../planning/spec-hash.js';
import { TestScope, testCluster, testKcp } from '../testing/control-plane-scope.js';
import { ControlPlaneInPlace, type InPlaceDeps } from './k3scontrolplane.in-place.js';
import { machineFacts } from './k3scontrolplane.machines.js';
import { planInputFor } from './k3scontrolplane.scale.js';
import { ProviderKinds } from '@capstan/provider-kit';

// The control plane's in-place updates on the in-memory API server: each machine is asked about on its own (after a
// partial failure machines run different versions), and starting an update never leaves a K3sConfig ahead of its
// Machine.

const NS = 'ns';
const OLD: K3sConfigSpec = { serverConfig: { kubeAPIServerArgs: ['event-ttl=1h'] } };
const NEW: K3sConfigSpec = { serverConfig: { kubeAPIServerArgs: ['event-ttl=2h'] } };
const now = new Date('2026-01-01T00:00:00Z');

const kcpWith = (version: string, k3sConfigSpec: K3sConfigSpec, inPlace: 'Preferred' | 'Required' = 'Preferred') =>
  testKcp({
    version,
    k3sConfigSpec,
    rollout: { inPlace },
    machineTemplate: {
      spec: { infrastructureRef: { apiGroup: RESOURCES.SimMachineTemplate.group, kind: 'SimMachineTemplate', name: 't' } },
    },
  });

/** The K3s bootstrap provider's version rule (in-place-decision.ts): a patch or the next minor, never a skip. */
const minor = (version: string | undefined) => Number(/^v\d+\.(\d+)\./.exec(version ?? '')?.[1]);
function versionRule(request: CanUpdateMachineRequest): CanUpdateMachineResponse {
  const skip = minor(request.desiredVersion) - minor(request.currentVersion);
  return skip <= 1
    ? { inPlace: true, restart: true }
    : { inPlace: false, reason: `skips a minor (${request.currentVersion} -> ${request.desiredVersion})`, fields: ['spec.version'] };
}

describe('the control plane in place', () => {
  let client: KubeClient;
  const machines = () => client.resource<Machine>(RESOURCES.Machine);
  const configs = () => client.resource<K3sConfig>(RESOURCES.K3sConfig);
  let asked: string[];
  let deps: InPlaceDeps;

  beforeEach(() => {
    client = new InMemoryApiServer([RESOURCES.Machine, RESOURCES.K3sConfig, RESOURCES.SimMachine]).client({ fieldManager: 'cp-test' });
    asked = [];
    deps = {
      client,
      machineClient: machines(),
      configClient: configs(),
      kinds: new ProviderKinds(client),
      ask: (request) => {
        asked.push(request.machine.name);
        return Promise.resolve(versionRule(request));
      },
    };
  });
  afterEach(() => client.close());

  /** A control plane machine and its K3sConfig, built from `spec` (hash) and running `kubelet`. */
  async function createMachine(name: string, built: { version: string; spec: K3sConfigSpec; kubelet?: string; annotations?: Record<string, string> }) {
    await configs().create({
      apiVersion: RESOURCES.K3sConfig.apiVersion,
      kind: RESOURCES.K3sConfig.kind,
      metadata: { name, namespace: NS },
      spec: structuredClone(built.spec),
    });
    const machine = await machines().create({
      apiVersion: RESOURCES.Machine.apiVersion,
      kind: RESOURCES.Machine.kind,
      metadata: {
        name,
        namespace: NS,
        annotations: { [CONTROL_PLANE_ANNOTATIONS.specHash]: machineSpecHash(kcpWith(built.version, built.spec)), ...built.annotations },
      },
      spec: {
        clusterName: 'demo',
        version: built.version,
        bootstrap: { configRef: { apiGroup: RESOURCES.K3sConfig.group, kind: RESOURCES.K3sConfig.kind, name } },
        infrastructureRef: { apiGroup: RESOURCES.SimMachine.group, kind: RESOURCES.SimMachine.kind, name },
      },
    });
    if (!built.kubelet) return machine;
    const ready = { type: 'Ready', status: 'True', reason: 'Ready', message: '', lastTransitionTime: '2026-01-01T00:00:00Z' };
    return machines().patchStatus({ namespace: NS, name }, {
      nodeInfo: { kubeletVersion: built.kubelet },
      conditions: [ready],
    } as Machine['status']);
  }

  const scopeOf = (kcp: ReturnType<typeof kcpWith>, list: Machine[]) =>
    new TestScope(kcp, { cluster: testCluster(), machines: list, facts: machineFacts(kcp, list, now.getTime()), now });
  const all = async () => (await machines().list({ namespace: NS })).items.sort((a, b) => (a.metadata.name! < b.metadata.name! ? -1 : 1));

  it('asks about every out-of-date machine on its own: after a partial failure one answer is not everyone’s', async () => {
    // b and c run v1.34; a's update to v1.35 failed after K3s v1.35 was installed (its kubelet says so).
    await createMachine('a', { version: 'v1.35.4', spec: OLD, kubelet: 'v1.35.4+k3s1' });
    await createMachine('b', { version: 'v1.34.4', spec: OLD, kubelet: 'v1.34.4+k3s1' });
    await createMachine('c', { version: 'v1.34.4', spec: OLD, kubelet: 'v1.34.4+k3s1' });
    const kcp = kcpWith('v1.36.0', OLD);
    const target = machineSpecHash(kcp);
    const test = scopeOf(kcp, await all());

    const verdict = await new ControlPlaneInPlace(test.scope, deps).verdict();

    // v1.35 -> v1.36 is the next minor, v1.34 -> v1.36 skips one: only a is updated in place.
    expect(asked.sort()).toEqual(['a', 'b', 'c']);
    expect(verdict).toEqual({ kind: 'apply', machines: ['a'] });
    const plan = planControlPlane({ ...planInputFor(kcp, testCluster(), test.scope.facts, true, now.getTime()), inPlace: verdict });
    expect(plan.action).toEqual({ type: 'update', machine: 'a' });
    // Each answer is recorded on its own Machine, for this target: a restart does not ask again.
    const recorded = Object.fromEntries((await all()).map((m) => [m.metadata.name, recordedDecision(m.metadata.annotations, target)?.inPlace]));
    expect(recorded).toEqual({ a: true, b: false, c: false });
    await new ControlPlaneInPlace(scopeOf(kcp, await all()).scope, deps).verdict();
    expect(asked).toHaveLength(3);
  });

  it('once only refused machines are left: replaces them under Preferred, and under Required names the machine', async () => {
    await createMachine('a', { version: 'v1.36.0', spec: OLD, kubelet: 'v1.36.0+k3s1' });
    await createMachine('b', { version: 'v1.34.4', spec: OLD, kubelet: 'v1.34.4+k3s1' });
    const preferred = kcpWith('v1.36.0', OLD);
    expect(await new ControlPlaneInPlace(scopeOf(preferred, await all()).scope, deps).verdict()).toEqual({ kind: 'replace' });
    const required = kcpWith('v1.36.0', OLD, 'Required');
    const verdict = await new ControlPlaneInPlace(scopeOf(required, await all()).scope, deps).verdict();
    expect(verdict).toMatchObject({ kind: 'blocked' });
    expect('reason' in verdict && verdict.reason).toBe(
      'Cannot update machine b in place (spec.version): skips a minor (v1.34.4 -> v1.36.0)',
    );
  });

  it('leaves the K3sConfig as it was when the Machine write conflicts', async () => {
    const stale = await createMachine('a', { version: 'v1.34.4', spec: OLD });
    // The Machine changed after the cache copy the plan was made from (its controller wrote it).
    await machines().mergePatch({ namespace: NS, name: 'a' }, { metadata: { labels: { touched: 'yes' } } });
    const kcp = kcpWith('v1.34.4', NEW);
    const test = scopeOf(kcp, [stale]);

    const error = await new ControlPlaneInPlace(test.scope, deps).start('a').catch((e: unknown) => e);

    expect(isConflict(error)).toBe(true);
    expect((await configs().get({ namespace: NS, name: 'a' })).spec).toEqual(OLD);
    // The spec goes back: the machine is up to date, and its K3sConfig still says what it runs.
    const reverted = kcpWith('v1.34.4', OLD);
    const next = scopeOf(reverted, await all());
    expect(next.scope.facts[0]).toMatchObject({ upToDate: true });
    await new ControlPlaneInPlace(next.scope, deps).resume();
    expect((await configs().get({ namespace: NS, name: 'a' })).spec).toEqual(OLD);
  });

  it('finishes a start cut off after the K3sConfig was written, for the same spec', async () => {
    const kcp = kcpWith('v1.34.4', NEW);
    const target = machineSpecHash(kcp);
    // Cut off between the K3sConfig write and the Machine's: the marker says the start was under way.
    await createMachine('a', { version: 'v1.34.4', spec: OLD, annotations: { [CONTROL_PLANE_ANNOTATIONS.inPlaceStarting]: target } });
    await configs().jsonPatch({ namespace: NS, name: 'a' }, [{ op: 'add', path: '/spec', value: NEW }]);
    const test = scopeOf(kcp, await all());
    // Until it is finished, it counts as updating: no other machine starts.
    expect(test.scope.facts[0]).toMatchObject({ updating: target });

    await new ControlPlaneInPlace(test.scope, deps).resume();

    const machine = await machines().get({ namespace: NS, name: 'a' });
    expect(machine.metadata.annotations).toMatchObject({
      [IN_PLACE_ANNOTATIONS.updateInProgress]: target,
      [CONTROL_PLANE_ANNOTATIONS.specHash]: target,
    });
    expect(machine.metadata.annotations?.[CONTROL_PLANE_ANNOTATIONS.inPlaceStarting]).toBeUndefined();
    expect((await configs().get({ namespace: NS, name: 'a' })).spec).toEqual(NEW);
  });

  it('puts the K3sConfig back when the spec went back to what the machine runs, after a cut-off start', async () => {
    const abandoned = machineSpecHash(kcpWith('v1.34.4', NEW));
    await createMachine('a', { version: 'v1.34.4', spec: OLD, annotations: { [CONTROL_PLANE_ANNOTATIONS.inPlaceStarting]: abandoned } });
    await configs().jsonPatch({ namespace: NS, name: 'a' }, [{ op: 'add', path: '/spec', value: NEW }]);
    const test = scopeOf(kcpWith('v1.34.4', OLD), await all());
    expect(test.scope.facts[0]).toMatchObject({ upToDate: true });

    await new ControlPlaneInPlace(test.scope, deps).resume();

    expect((await configs().get({ namespace: NS, name: 'a' })).spec).toEqual(OLD);
    const machine = await machines().get({ namespace: NS, name: 'a' });
    expect(machine.metadata.annotations?.[CONTROL_PLANE_ANNOTATIONS.inPlaceStarting]).toBeUndefined();
    expect(machine.metadata.annotations?.[IN_PLACE_ANNOTATIONS.updateInProgress]).toBeUndefined();
  });

  it('restarts K3s on the next update of a machine whose K3sConfig an abandoned start may have moved on', async () => {
    const abandoned = machineSpecHash(kcpWith('v1.34.4', NEW));
    await createMachine('a', { version: 'v1.34.4', spec: OLD, kubelet: 'v1.34.4+k3s1', annotations: { [CONTROL_PLANE_ANNOTATIONS.inPlaceStarting]: abandoned } });
    await configs().jsonPatch({ namespace: NS, name: 'a' }, [{ op: 'add', path: '/spec', value: NEW }]);
    // The spec moved on again: from NEW, files only would need no restart; from OLD (what K3s runs) it does.
    const kcp = kcpWith('v1.34.4', { ...NEW, files: [{ path: '/etc/motd', content: 'hi' }] });
    deps.ask = () => Promise.resolve({ inPlace: true });
    const inPlace = new ControlPlaneInPlace(scopeOf(kcp, await all()).scope, deps);
    expect(await inPlace.verdict()).toEqual({ kind: 'apply', machines: ['a'] });
    await inPlace.start('a');

    const machine = await machines().get({ namespace: NS, name: 'a' });
    expect(machine.metadata.annotations?.[IN_PLACE_ANNOTATIONS.restart]).toBe('true');
    expect(machine.metadata.annotations?.[CONTROL_PLANE_ANNOTATIONS.inPlaceStarting]).toBeUndefined();
  });
});
