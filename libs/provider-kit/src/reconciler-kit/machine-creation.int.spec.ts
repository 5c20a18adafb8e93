import { RESOURCES, type Machine } from '@capstan/api';
import {
  KubeApiError,
  KubeClient,
  KubeTransportError,
  runWithCallSignal,
  type ResourceClient,
  type ResourceType,
  type WriteOptions,
} from '@capstan/kube';
import {
  createTestNamespace,
  eventually,
  genericProviderKind,
  installCapstanDefinitions,
  installGenericProviderCrds,
  type TestNamespace,
} from '@capstan/testing';
import type { KubernetesObject } from '@kubernetes/client-node';
import pino from 'pino';
import {
  createMachineUnit,
  MACHINE_CREATE_SERVER_TIMEOUT_SECONDS,
  MachineCreationError,
  type MachineClone,
} from './machine-creation.js';

// Each interleaving of a Machine's creation with a cut-off reconcile or a lost answer, against the real API server:
// the requests are real; the test decides when each one is sent and what its caller hears.

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const typeOf = (kind: string): ResourceType => {
  const k = genericProviderKind(kind);
  return { group: k.group, version: k.version, plural: k.plural, kind: k.kind, namespaced: true };
};
const INFRA = typeOf('GenericInfrastructureMachine');
const BOOTSTRAP = typeOf('GenericBootstrapConfig');
const log = pino({ level: 'silent' });
/** The tests' stand-in for the server's deadline plus margin: the held creates below land well within it. */
const SETTLE_MS = 1_500;

/** What the caller hears when its request's answer is lost (the reconcile's abort, a broken connection). */
const lostAnswer = (path: string) =>
  new KubeTransportError('POST', path, new DOMException('This operation was aborted', 'AbortError'));

describe('createMachineUnit', () => {
  let ns: TestNamespace;
  let client: KubeClient;
  let machines: ResourceClient<Machine>;
  let counter = 0;

  beforeAll(async () => {
    ns = await createTestNamespace('kit-create');
    await installCapstanDefinitions(ns.kc);
    await installGenericProviderCrds(ns.kc);
    client = new KubeClient(ns.kc, { fieldManager: 'kit-test' });
    machines = client.resource<Machine>(RESOURCES.Machine);
  });
  afterAll(async () => {
    await client?.close();
    await ns?.delete();
  });

  const exists = async (type: ResourceType, name: string) =>
    (await client.resource(type).getIfExists({ namespace: ns.name, name })) !== undefined;
  const clone = (type: ResourceType, name: string, before?: () => void): MachineClone => ({
    kind: type.kind,
    create: async () => {
      const created = await client.resource<KubernetesObject>(type).create({
        apiVersion: `${type.group}/${type.version}`,
        kind: type.kind,
        metadata: { name, namespace: ns.name },
        spec: {},
      } as KubernetesObject);
      before?.();
      return created;
    },
    delete: () => client.resource(type).delete({ namespace: ns.name, name }),
  });
  const machineBody = (name: string): Machine => ({
    apiVersion: RESOURCES.Machine.apiVersion,
    kind: RESOURCES.Machine.kind,
    metadata: { name, namespace: ns.name },
    spec: {
      clusterName: 'demo',
      bootstrap: { configRef: { apiGroup: BOOTSTRAP.group, kind: BOOTSTRAP.kind, name } },
      infrastructureRef: { apiGroup: INFRA.group, kind: INFRA.kind, name },
    },
  });
  /** A unit whose Machine create is `createMachine` (by default, the real one). */
  const unit = (
    name: string,
    createMachine?: (options: WriteOptions) => Promise<Machine>,
    onFirstClone?: () => void,
  ) => ({
    name,
    log,
    clones: [clone(BOOTSTRAP, name, onFirstClone), clone(INFRA, name)],
    createMachine: createMachine ?? ((options: WriteOptions) => machines.create(machineBody(name), options)),
    readMachine: () => machines.getIfExists({ namespace: ns.name, name }),
    resolveDelaysMs: [50, 50],
    settleAfterMs: SETTLE_MS,
  });
  const state = async (name: string) => ({
    machine: await exists(RESOURCES.Machine, name),
    bootstrap: await exists(BOOTSTRAP, name),
    infrastructure: await exists(INFRA, name),
  });
  const nextName = () => `m-${counter++}`;

  it('stops at a hand-over during the clones: deletes the clones made and never sends the Machine', async () => {
    const name = nextName();
    const handOver = new AbortController();
    let machineSent = false;
    const error = await runWithCallSignal(handOver.signal, () =>
      createMachineUnit(
        unit(
          name,
          () => {
            machineSent = true;
            return machines.create(machineBody(name));
          },
          () => handOver.abort(new Error('cluster moved to another replica')),
        ),
      ),
    ).catch((err: unknown) => err);
    expect(error).toMatchObject({ stage: 'clone', cloneKind: INFRA.kind, clonesKept: false });
    expect(machineSent).toBe(false);
    expect(await state(name)).toEqual({ machine: false, bootstrap: false, infrastructure: false });
  });

  it('creates nothing when the reconcile was cut before it started', async () => {
    const name = nextName();
    const handOver = new AbortController();
    handOver.abort(new Error('cluster moved to another replica'));
    await expect(runWithCallSignal(handOver.signal, () => createMachineUnit(unit(name)))).rejects.toThrow(
      MachineCreationError,
    );
    expect(await state(name)).toEqual({ machine: false, bootstrap: false, infrastructure: false });
  });

  it('keeps the clones when a hand-over cut the Machine create, so the server committing it later strands nothing', async () => {
    const name = nextName();
    const handOver = new AbortController();
    let held: (() => Promise<Machine>) | undefined;
    let calls = 0;
    const createMachine = () => {
      calls++;
      held = () => machines.create(machineBody(name));
      handOver.abort(new Error('cluster moved to another replica'));
      return Promise.reject(lostAnswer('/machines'));
    };
    const error = await runWithCallSignal(handOver.signal, () =>
      createMachineUnit(unit(name, createMachine)),
    ).catch((err: unknown) => err);
    expect(error).toMatchObject({ stage: 'machine', clonesKept: true });
    // Cut: the replica that lost the cluster sends nothing more.
    expect(calls).toBe(1);
    await held!();
    // Settled once the server's deadline passed: the Machine exists, so it keeps its clones.
    await sleep(SETTLE_MS + 500);
    expect(await state(name)).toEqual({ machine: true, bootstrap: true, infrastructure: true });
  });

  it('settles a cut create once the server’s deadline passed: no Machine, so its clones go', async () => {
    const name = nextName();
    const handOver = new AbortController();
    const sent: WriteOptions[] = [];
    const createMachine = (options: WriteOptions) => {
      sent.push(options);
      handOver.abort(new Error('cluster moved to another replica'));
      return Promise.reject(lostAnswer('/machines'));
    };
    const error = await runWithCallSignal(handOver.signal, () =>
      createMachineUnit(unit(name, createMachine)),
    ).catch((err: unknown) => err);
    expect(error).toMatchObject({ stage: 'machine', clonesKept: true });
    // Every create carries the server's deadline, which is what makes the later read definitive.
    expect(sent).toEqual([{ serverTimeoutSeconds: MACHINE_CREATE_SERVER_TIMEOUT_SECONDS }]);
    expect(await state(name)).toEqual({ machine: false, bootstrap: true, infrastructure: true });
    await eventually(async () => !(await state(name)).infrastructure && !(await state(name)).bootstrap, {
      message: 'the clones deleted once settled',
      timeoutMs: 10_000,
    });
  });

  it('resolves a Machine create the server committed after its answer was lost (and after a read said absent)', async () => {
    const name = nextName();
    let held: (() => Promise<Machine>) | undefined;
    let calls = 0;
    const createMachine = async () => {
      calls++;
      if (calls === 1) {
        // The request is on its way; its caller gives up. The server commits it only later.
        held = () => machines.create(machineBody(name));
        throw lostAnswer('/machines');
      }
      // The read a caller could make now finds nothing...
      expect(await exists(RESOURCES.Machine, name)).toBe(false);
      // ...and then the held request reaches the server.
      await held!();
      return machines.create(machineBody(name));
    };
    const created = await createMachineUnit(unit(name, createMachine));
    expect(created.metadata.name).toBe(name);
    expect(calls).toBe(2);
    expect(await state(name)).toEqual({ machine: true, bootstrap: true, infrastructure: true });
  });

  it('resolves a lost answer by sending the create again when the first never arrived', async () => {
    const name = nextName();
    let calls = 0;
    const createMachine = async () => {
      if (calls++ === 0) throw lostAnswer('/machines');
      return machines.create(machineBody(name));
    };
    await createMachineUnit(unit(name, createMachine));
    expect(await state(name)).toEqual({ machine: true, bootstrap: true, infrastructure: true });
  });

  it('keeps the clones when the Machine’s fate stays unknown', async () => {
    const name = nextName();
    const error = await createMachineUnit(unit(name, () => Promise.reject(lostAnswer('/machines')))).catch(
      (err: unknown) => err,
    );
    expect(error).toBeInstanceOf(MachineCreationError);
    expect(error).toMatchObject({ stage: 'machine', clonesKept: true });
    expect(await state(name)).toEqual({ machine: false, bootstrap: true, infrastructure: true });
  });

  it('settles with the server’s word when an unanswered create lands before the deadline: the clones stay', async () => {
    const name = nextName();
    let held: (() => Promise<Machine>) | undefined;
    const createMachine = () => {
      held ??= () => machines.create(machineBody(name));
      return Promise.reject(lostAnswer('/machines'));
    };
    await createMachineUnit(unit(name, createMachine)).catch(() => undefined);
    await held!();
    await sleep(SETTLE_MS + 500);
    expect(await state(name)).toEqual({ machine: true, bootstrap: true, infrastructure: true });
  });

  it('deletes the clones when the server refused the Machine', async () => {
    const name = nextName();
    const invalid = { ...machineBody(name), spec: { ...machineBody(name).spec, clusterName: '' } };
    const error = await createMachineUnit(unit(name, () => machines.create(invalid))).catch(
      (err: unknown) => err,
    );
    expect(error).toMatchObject({ stage: 'machine', clonesKept: false });
    expect((error as MachineCreationError).message).toMatch(/422/);
    expect(await state(name)).toEqual({ machine: false, bootstrap: false, infrastructure: false });
  });

  it('keeps the clones when a later attempt is refused for a reason that says nothing of the first', async () => {
    const name = nextName();
    let calls = 0;
    const forbidden = new KubeApiError('POST', '/machines', { reason: 'Forbidden', code: 403 }, 403);
    const createMachine = () => Promise.reject(calls++ === 0 ? lostAnswer('/machines') : forbidden);
    const error = await createMachineUnit(unit(name, createMachine)).catch((err: unknown) => err);
    expect(error).toMatchObject({ stage: 'machine', clonesKept: true });
    expect(await state(name)).toEqual({ machine: false, bootstrap: true, infrastructure: true });
  });

  it('deletes a clone whose create was lost and landed late, once the server’s deadline passed', async () => {
    const name = nextName();
    let held: (() => Promise<unknown>) | undefined;
    const late: MachineClone = {
      kind: INFRA.kind,
      create: (options) => {
        held = () => clone(INFRA, name).create(options);
        return Promise.reject(lostAnswer('/genericinfrastructuremachines'));
      },
      delete: () => client.resource(INFRA).delete({ namespace: ns.name, name }),
    };
    await createMachineUnit({ ...unit(name), clones: [clone(BOOTSTRAP, name), late] }).catch(() => undefined);
    // The lost create reaches the server after the unit deleted what it had made.
    await held!();
    expect(await state(name)).toEqual({ machine: false, bootstrap: false, infrastructure: true });
    await eventually(async () => !(await state(name)).infrastructure, {
      message: 'the late clone deleted once settled',
      timeoutMs: 10_000,
    });
  });

  it('leaves a clone that already existed to whoever made it', async () => {
    const name = nextName();
    await clone(INFRA, name).create({});
    const error = await createMachineUnit(unit(name)).catch((err: unknown) => err);
    expect(error).toMatchObject({ stage: 'clone', cloneKind: INFRA.kind });
    expect(await state(name)).toEqual({ machine: false, bootstrap: false, infrastructure: true });
  });

  it('deletes the clones made before a clone that failed, and never sends the Machine', async () => {
    const name = nextName();
    let machineSent = false;
    const failing: MachineClone = {
      kind: INFRA.kind,
      create: () => Promise.reject(lostAnswer('/genericinfrastructuremachines')),
      delete: () => client.resource(INFRA).delete({ namespace: ns.name, name }),
    };
    const error = await createMachineUnit({
      ...unit(name, () => {
        machineSent = true;
        return machines.create(machineBody(name));
      }),
      clones: [clone(BOOTSTRAP, name), failing],
    }).catch((err: unknown) => err);
    expect(error).toMatchObject({ stage: 'clone', cloneKind: INFRA.kind, clonesKept: false });
    expect(machineSent).toBe(false);
    expect(await state(name)).toEqual({ machine: false, bootstrap: false, infrastructure: false });
  });
});
