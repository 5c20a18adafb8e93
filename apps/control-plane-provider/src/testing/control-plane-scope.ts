import { pino } from 'pino';
import { RESOURCES, type Cluster, type K3sControlPlane, type Machine } from '@capstan/api';
import type { OwedEvent, ReconcileScope } from '@capstan/provider-kit';
import type { ControlPlaneMachine } from '../planning/control-plane-machine.js';
import type { ControlPlaneScope } from '../k3scontrolplane/k3scontrolplane.scope.js';

const silent = pino({ level: 'silent' });

export function testKcp(
  spec: Partial<K3sControlPlane['spec']> = {},
  status?: K3sControlPlane['status'],
): K3sControlPlane {
  return {
    apiVersion: RESOURCES.K3sControlPlane.apiVersion,
    kind: RESOURCES.K3sControlPlane.kind,
    metadata: { name: 'demo-cp', namespace: 'ns', uid: 'kcp-uid', generation: 2, resourceVersion: '10' },
    spec: {
      replicas: 3,
      version: 'v1.31.4',
      machineTemplate: {
        spec: {
          infrastructureRef: {
            apiGroup: 'infrastructure.example',
            kind: 'ExampleMachineTemplate',
            name: 't',
          },
        },
      },
      ...spec,
    },
    ...(status && { status }),
  };
}

export function testCluster(overrides: Partial<Cluster> = {}): Cluster {
  return {
    apiVersion: RESOURCES.Cluster.apiVersion,
    kind: RESOURCES.Cluster.kind,
    metadata: { name: 'demo', namespace: 'ns', uid: 'cluster-uid' },
    spec: {},
    ...overrides,
  };
}

/** A phase's scope over a kit scope whose writes only bump the resourceVersion, recording what happened. */
export class TestScope {
  /** The K3sControlPlane after each write, in order. */
  readonly written: K3sControlPlane[] = [];
  readonly announced: OwedEvent[] = [];
  /** Kubernetes Events as `<reason>: <note>`. */
  readonly recorded: string[] = [];
  readonly kit: ReconcileScope<K3sControlPlane>;
  readonly scope: ControlPlaneScope;

  constructor(
    kcp: K3sControlPlane,
    options: { cluster?: Cluster; machines?: Machine[]; facts?: ControlPlaneMachine[]; now?: Date } = {},
  ) {
    const cluster = options.cluster ?? testCluster();
    const key = `${kcp.metadata.namespace}/${kcp.metadata.name}`;
    const kit: ReconcileScope<K3sControlPlane> = {
      key,
      rc: {
        key,
        namespace: kcp.metadata.namespace,
        name: kcp.metadata.name!,
        reconcileId: 'test',
        log: silent,
        signal: new AbortController().signal,
      },
      original: structuredClone(kcp),
      obj: structuredClone(kcp),
      cluster,
      patchNow: async () => {
        const version = String(Number(kit.obj.metadata.resourceVersion ?? '0') + 1);
        kit.obj = {
          ...structuredClone(kit.obj),
          metadata: { ...kit.obj.metadata, resourceVersion: version },
        };
        this.written.push(structuredClone(kit.obj));
        return kit.obj;
      },
      announce: (...events) => this.announced.push(...events),
    };
    this.kit = kit;
    this.scope = {
      kit,
      cluster,
      clusterName: cluster.metadata.name!,
      now: options.now ?? new Date('2026-01-01T00:00:00Z'),
      machines: options.machines ?? [],
      facts: options.facts ?? [],
      log: silent,
      record: (reason, action, note) => this.record(kit.obj, reason, action, note),
    };
  }

  /** Kubernetes Events a status write records on the K3sControlPlane. */
  readonly record = async (
    _kcp: K3sControlPlane,
    reason: string,
    _action: string,
    note: string,
  ): Promise<void> => {
    this.recorded.push(`${reason}: ${note}`);
  };
}
