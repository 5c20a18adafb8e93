import type { V1Secret } from '@kubernetes/client-node';
import {
  ANNOTATIONS,
  ConditionStatus,
  getCondition,
  toRFC3339,
  type K3sConfig,
  type K3sControlPlane,
  type K3sControlPlaneCertificateRotationStatus,
  type Machine,
} from '@capstan/api';
import {
  CERTIFICATE_CHECK_INSTRUCTION,
  certificateRotateArgs,
  certificatesExpiryIn,
} from '@capstan/k3s-bootstrap';
import {
  decodeSecretData,
  gunzipJson,
  PLAN_KEYS,
  text,
  type MachinePlan,
  type PeriodicOutput,
} from '@capstan/node-agent';
import type { EventRecorder, ResourceClient } from '@capstan/kube';
import type { ReconcileScope } from '@capstan/provider-kit';
import { ONE_DAY_MS } from '@capstan/pki';
import { setOperationStatus } from './day2-status.js';
import { etcdServers, planSecretOf, type EtcdCaches } from './etcd-servers.js';
import { advancePlanOperation, operationOf } from './plan-operation.js';

// Certificate rotation of a K3s control plane, in place (docs/day2.md). Every server reports when its certificates
// expire (the periodic `k3s certificate check` of its plan); this writes that on the machine's K3sConfig as upstream's
// `machine.cluster.x-k8s.io/certificates-expiry`, which the core copies to Machine.status.certificatesExpiryDate. A
// rotation runs `k3s certificate rotate` on one server at a time (Rancher's rotateCertificates), when asked for in
// spec.rotateCertificates or when a server's certificates expire within spec.rollout.before.certificatesExpiryDays.
// Upstream's KubeadmControlPlane replaces such a Machine; here no Machine is replaced.

export const CERTIFICATES_CONDITION = 'CertificatesRotated';

/** How long a rotation that failed on its own (ExpiringSoon) waits before it is tried again. */
const RETRY_FAILED_MS = 10 * 60_000;
const WAIT_MS = 10_000;

export interface CertificateRotationDeps {
  caches: EtcdCaches;
  secrets: ResourceClient<V1Secret>;
  configs: ResourceClient<K3sConfig>;
  recorder: EventRecorder;
}

type Status = K3sControlPlaneCertificateRotationStatus;

export class CertificateRotation {
  constructor(private readonly deps: CertificateRotationDeps) {}

  async reconcile(scope: ReconcileScope<K3sControlPlane>, now: Date): Promise<number | undefined> {
    const kcp = scope.obj;
    const servers = etcdServers(this.deps.caches, kcp);
    const expiries = new Map<string, Date>();
    for (const server of servers) {
      const expiry = await this.reportedExpiry(server);
      if (expiry) expiries.set(server.metadata.name!, expiry);
    }
    if (kcp.status?.initialization?.controlPlaneInitialized !== true) return undefined;

    let status = kcp.status?.certificateRotation;
    if (status?.phase !== 'Rotating') {
      const started = this.start(kcp, status, servers, expiries, now);
      if (!started) return this.nextCheck(kcp, expiries, now);
      status = started;
      this.set(scope, status, now, 'Rotating', `rotating ${started.pending!.join(', ')}, one at a time`);
      void this.deps.recorder.event(kcp, {
        type: 'Normal',
        reason: 'CertificateRotationStarted',
        action: 'RotateCertificates',
        note: `${started.reason}: rotating the certificates of ${started.pending!.join(', ')}`,
      });
    }
    return this.advance(scope, status, servers, now);
  }

  /** A new rotation, when one is asked for (a new generation) or a server's certificates expire within the window. */
  private start(
    kcp: K3sControlPlane,
    last: Status | undefined,
    servers: readonly Machine[],
    expiries: ReadonlyMap<string, Date>,
    now: Date,
  ): Status | undefined {
    const handled = last?.generation ?? 0;
    const wanted = kcp.spec.rotateCertificates;
    // Every rotation carries the last request's generation on, so a request is handled once.
    const begin = (reason: Status['reason'], pending: string[]): Status => {
      const generation = reason === 'Requested' ? wanted?.generation : last?.generation;
      return {
        reason,
        phase: 'Rotating',
        ...(generation !== undefined && { generation }),
        pending,
        rotated: [],
        startTime: toRFC3339(now),
      };
    };
    if (wanted && wanted.generation !== handled && servers.length > 0)
      return begin(
        'Requested',
        servers.map((m) => m.metadata.name!),
      );
    const days = kcp.spec.rollout?.before?.certificatesExpiryDays;
    if (!days) return undefined;
    if (
      last?.phase === 'Failed' &&
      last.reason === 'ExpiringSoon' &&
      now.getTime() - Date.parse(last.completionTime ?? last.startTime) < RETRY_FAILED_MS
    )
      return undefined;
    const expiring = servers
      .filter((m) => {
        const expiry = expiries.get(m.metadata.name!);
        return expiry !== undefined && expiry.getTime() < now.getTime() + days * ONE_DAY_MS;
      })
      .map((m) => m.metadata.name!);
    return expiring.length > 0 ? begin('ExpiringSoon', expiring) : undefined;
  }

  /** One step: the first pending server rotates (when the others are Ready); its outcome moves the rotation on. */
  private async advance(
    scope: ReconcileScope<K3sControlPlane>,
    status: Status,
    servers: readonly Machine[],
    now: Date,
  ): Promise<number | undefined> {
    const kcp = scope.obj;
    const [name, ...rest] = status.pending ?? [];
    if (!name) return this.finish(scope, status, now, 'Finished');
    const server = servers.find((m) => m.metadata.name === name);
    if (!server) {
      // Deleted (scaled down, replaced) meanwhile: its successor has new certificates.
      this.set(scope, { ...status, pending: rest }, now, 'Rotating', `${name} is gone; skipped`);
      return 1;
    }
    const secret = planSecretOf(this.deps.caches, server);
    if (!secret) return WAIT_MS;
    const id = `certificates-${kcp.metadata.uid}-${Date.parse(status.startTime)}-${name}`;
    const notReady = servers.filter((m) => m !== server && !nodeReady(m)).map((m) => m.metadata.name!);
    if (notReady.length > 0 && !runsOperation(secret, id)) {
      // A real K3s server is stopped while it rotates: the others must hold quorum meanwhile.
      this.set(
        scope,
        status,
        now,
        'WaitingForQuorum',
        `waiting for ${notReady.join(', ')} to be Ready before ${name} rotates`,
      );
      return WAIT_MS;
    }
    const outcome = await advancePlanOperation(this.deps.secrets, secret, {
      id,
      instruction: {
        name: 'certificate-rotate',
        command: 'sh',
        args: certificateRotateArgs(kcp.spec.rotateCertificates?.services ?? []),
        saveOutput: true,
        timeoutSeconds: 600,
      },
    });
    if (outcome.state === 'failed') {
      return this.finish(
        scope,
        status,
        now,
        'Failed',
        `the rotation failed on ${name}: ${outcome.message}. Servers not rotated keep their certificates; fix the cause and raise spec.rotateCertificates.generation to try again`,
      );
    }
    if (outcome.state !== 'succeeded') {
      if (outcome.state === 'busy')
        this.set(scope, status, now, 'Rotating', `waiting for ${name}: ${outcome.message}`);
      return WAIT_MS * 3;
    }
    const expiry = certificatesExpiryIn(outcome.output);
    if (expiry) await this.annotate(server, expiry);
    const days = kcp.spec.rollout?.before?.certificatesExpiryDays;
    if (expiry && days && expiry.getTime() < now.getTime() + days * ONE_DAY_MS) {
      return this.finish(
        scope,
        { ...status, rotated: [...(status.rotated ?? []), name] },
        now,
        'Failed',
        `${name} was rotated, and its new certificates expire at ${toRFC3339(expiry)}, still within rollout.before.certificatesExpiryDays (${days}): the certificates K3s issues here last less than that; lower certificatesExpiryDays`,
      );
    }
    const next: Status = { ...status, pending: rest, rotated: [...(status.rotated ?? []), name] };
    void this.deps.recorder.event(kcp, {
      type: 'Normal',
      reason: 'CertificatesRotated',
      action: 'RotateCertificates',
      note: `rotated the certificates of ${name}${expiry ? `; they expire at ${toRFC3339(expiry)}` : ''}`,
    });
    if (rest.length === 0) return this.finish(scope, next, now, 'Finished');
    this.set(scope, next, now, 'Rotating', `rotated ${next.rotated!.join(', ')}; next ${rest[0]}`);
    return 1;
  }

  private finish(
    scope: ReconcileScope<K3sControlPlane>,
    status: Status,
    now: Date,
    phase: 'Finished' | 'Failed',
    message?: string,
  ): undefined {
    const done: Status = {
      ...status,
      phase,
      completionTime: toRFC3339(now),
      ...(message && { message: message.slice(0, 2048) }),
    };
    delete done.pending;
    const text = message ?? `rotated the certificates of ${(status.rotated ?? []).join(', ') || 'no server'}`;
    this.set(scope, done, now, phase === 'Finished' ? 'Rotated' : 'RotationFailed', text);
    void this.deps.recorder.event(scope.obj, {
      type: phase === 'Finished' ? 'Normal' : 'Warning',
      reason: phase === 'Finished' ? 'CertificateRotationFinished' : 'CertificateRotationFailed',
      action: 'RotateCertificates',
      note: text.slice(0, 1024),
    });
    return undefined;
  }

  /**
   * The expiry a server last reported (its periodic check), written on its K3sConfig when it changed. Undefined
   * while it has not reported.
   */
  private async reportedExpiry(server: Machine): Promise<Date | undefined> {
    const secret = planSecretOf(this.deps.caches, server);
    if (!secret) return recordedExpiry(server);
    const data = decodeSecretData(secret.data);
    const output = gunzipJson<Record<string, PeriodicOutput>>(data[PLAN_KEYS.periodicOutput])?.[
      CERTIFICATE_CHECK_INSTRUCTION
    ];
    // A check that ran before the machine's last plan applied (a rotation, an update) may tell of certificates
    // replaced since: the agent runs it again right after, and until then the expiry is unknown here (the Machine's
    // copy may lag the rotation's own report, so it is no better). Both times are the agent's clock.
    const applied = Date.parse(text(data, PLAN_KEYS.lastApplyTime) ?? '');
    const ran = Date.parse(output?.lastSuccessfulRunTime ?? '');
    if (!Number.isNaN(applied) && !(ran >= applied)) return undefined;
    const reported = certificatesExpiryIn(output?.stdout ?? '');
    if (!reported) return recordedExpiry(server);
    await this.annotate(server, reported);
    return reported;
  }

  /** `machine.cluster.x-k8s.io/certificates-expiry` on the machine's K3sConfig (the core copies it to the Machine). */
  private async annotate(server: Machine, expiry: Date): Promise<void> {
    const value = toRFC3339(expiry);
    if (server.status?.certificatesExpiryDate === value) return;
    const ref = server.spec.bootstrap?.configRef;
    if (!ref?.name || ref.kind !== 'K3sConfig') return;
    await this.deps.configs.mergePatch(
      { namespace: server.metadata.namespace, name: ref.name },
      { metadata: { annotations: { [ANNOTATIONS.certificatesExpiry]: value } } },
    );
  }

  /** When the earliest expiry enters the window (at most a day away, so a clock jump is noticed). */
  private nextCheck(
    kcp: K3sControlPlane,
    expiries: ReadonlyMap<string, Date>,
    now: Date,
  ): number | undefined {
    const days = kcp.spec.rollout?.before?.certificatesExpiryDays;
    if (!days || expiries.size === 0) return undefined;
    const earliest = Math.min(...[...expiries.values()].map((d) => d.getTime()));
    return Math.min(ONE_DAY_MS, Math.max(1000, earliest - days * ONE_DAY_MS - now.getTime()));
  }

  private set(
    scope: ReconcileScope<K3sControlPlane>,
    status: Status,
    now: Date,
    reason: string,
    message: string,
  ): void {
    const healthy = status.phase === 'Finished';
    setOperationStatus(
      scope,
      { certificateRotation: status },
      {
        type: CERTIFICATES_CONDITION,
        status: healthy ? ConditionStatus.True : ConditionStatus.False,
        reason,
        message,
      },
      now,
    );
  }
}

function recordedExpiry(machine: Machine): Date | undefined {
  const value = machine.status?.certificatesExpiryDate;
  const ms = value ? Date.parse(value) : NaN;
  return Number.isNaN(ms) ? undefined : new Date(ms);
}

function nodeReady(machine: Machine): boolean {
  return getCondition(machine.status?.conditions, 'NodeReady')?.status === ConditionStatus.True;
}

/** The machine's plan already runs this operation (it started while every server was Ready). */
function runsOperation(secret: V1Secret, id: string): boolean {
  try {
    const raw = decodeSecretData(secret.data)[PLAN_KEYS.plan];
    return raw !== undefined && operationOf(JSON.parse(raw.toString('utf8')) as MachinePlan) === id;
  } catch {
    return false;
  }
}
