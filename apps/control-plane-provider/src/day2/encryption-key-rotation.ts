import type { V1Secret } from '@kubernetes/client-node';
import {
  ConditionStatus,
  toRFC3339,
  type EncryptionKeyRotationPhase,
  type K3sControlPlane,
  type K3sControlPlaneEncryptionKeyRotationStatus,
  type Machine,
} from '@capstan/api';
import {
  encryptionStageIn,
  secretsEncryptArgs,
  secretsEncryptRestartArgs,
  secretsEncryptStatusArgs,
} from '@capstan/k3s-bootstrap';
import type { EventRecorder, ResourceClient } from '@capstan/kube';
import type { ReconcileScope } from '@capstan/provider-kit';
import { setOperationStatus } from './day2-status.js';
import { etcdServers, planSecretOf, type EtcdCaches } from './etcd-servers.js';
import { advancePlanOperation } from './plan-operation.js';

// Secrets-encryption key rotation in Rancher's phases (docs/day2.md; rancher/rancher
// pkg/capr/planner/encryptionkeyrotation.go): the leader (the oldest server) runs `k3s secrets-encrypt prepare`, then
// every other server restarts; then `rotate`, restarts; then `reencrypt`, restarts. Each plan ends with
// `k3s secrets-encrypt status`, and the stage it prints must be the one the phase leads to, on the leader and on
// every server restarted after it, before the next phase starts.

export const ENCRYPTION_CONDITION = 'EncryptionKeysRotated';

type Status = K3sControlPlaneEncryptionKeyRotationStatus;
type CommandPhase = 'Prepare' | 'Rotate' | 'Reencrypt';

/** Each command phase: its command, the stage it leaves the servers in, and the restart phase after it. */
const COMMAND_PHASES: Record<
  CommandPhase,
  { command: 'prepare' | 'rotate' | 'reencrypt'; stage: string; restart: EncryptionKeyRotationPhase }
> = {
  Prepare: { command: 'prepare', stage: 'prepare', restart: 'PostPrepareRestart' },
  Rotate: { command: 'rotate', stage: 'rotate', restart: 'PostRotateRestart' },
  Reencrypt: { command: 'reencrypt', stage: 'reencrypt_finished', restart: 'PostReencryptRestart' },
};
const NEXT_AFTER_RESTART: Partial<Record<EncryptionKeyRotationPhase, EncryptionKeyRotationPhase>> = {
  PostPrepareRestart: 'Rotate',
  PostRotateRestart: 'Reencrypt',
  PostReencryptRestart: 'Done',
};
const WAIT_MS = 10_000;
/** How often a background re-encryption is looked at (Rancher's periodic status runs every 5 s). */
const REENCRYPT_CHECK_MS = 5_000;

export interface EncryptionKeyRotationDeps {
  caches: EtcdCaches;
  secrets: ResourceClient<V1Secret>;
  recorder: EventRecorder;
}

export class EncryptionKeyRotation {
  constructor(private readonly deps: EncryptionKeyRotationDeps) {}

  async reconcile(scope: ReconcileScope<K3sControlPlane>, now: Date): Promise<number | undefined> {
    const kcp = scope.obj;
    const wanted = kcp.spec.rotateEncryptionKeys;
    if (!wanted) return undefined;
    let status = kcp.status?.rotateEncryptionKeys;
    if (status?.generation === wanted.generation && (status.phase === 'Done' || status.phase === 'Failed'))
      return undefined;
    if (kcp.status?.initialization?.controlPlaneInitialized !== true) return WAIT_MS;
    const servers = etcdServers(this.deps.caches, kcp);
    if (status?.generation !== wanted.generation) {
      status = { generation: wanted.generation, phase: 'Prepare', startTime: toRFC3339(now) };
      if (kcp.spec.k3sConfigSpec?.serverConfig?.secretsEncryption !== true) {
        return this.fail(
          scope,
          status,
          now,
          'secrets encryption is not enabled on this control plane (k3sConfigSpec.serverConfig.secretsEncryption: true, set when the cluster is created): there is no key to rotate',
        );
      }
      this.set(scope, status, now, 'Prepare', 'rotation started');
      void this.deps.recorder.event(kcp, {
        type: 'Normal',
        reason: 'EncryptionKeyRotationStarted',
        action: 'RotateEncryptionKeys',
        note: `encryption key rotation ${wanted.generation} started`,
      });
    }
    // Rancher elects the leader once, in Prepare; it must stay for the other phases.
    const leader = status.leader ? servers.find((m) => m.metadata.name === status!.leader) : servers[0];
    if (!leader) {
      if (status.leader && status.phase !== 'Prepare')
        return this.fail(
          scope,
          status,
          now,
          `the leader ${status.leader} is gone in ${status.phase}: the rotation cannot go on`,
        );
      return WAIT_MS;
    }
    if (!status.leader) status = { ...status, leader: leader.metadata.name! };

    let current: Status = status;
    for (let step = 0; step < 8; step++) {
      const phase: EncryptionKeyRotationPhase = current.phase;
      if (phase === 'Done' || phase === 'Failed') return undefined;
      const next: Status | number | undefined =
        phase in COMMAND_PHASES
          ? await this.commandPhase(scope, current, leader, phase as CommandPhase, now)
          : await this.restartPhase(scope, current, leader, servers, now);
      if (typeof next === 'number' || next === undefined) return next;
      current = next;
    }
    return 1;
  }

  /** The leader runs the phase's command; its status must show the stage the command leads to. */
  private async commandPhase(
    scope: ReconcileScope<K3sControlPlane>,
    status: Status,
    leader: Machine,
    phase: CommandPhase,
    now: Date,
  ): Promise<Status | number | undefined> {
    const { command, stage, restart } = COMMAND_PHASES[phase];
    // K3s re-encrypts in the background: while the leader says so, its status is asked again (a plan each time).
    const checking = status.checks !== undefined;
    const outcome = checking
      ? await this.run(
          scope.obj,
          status,
          leader,
          `${phase}-check-${status.checks}`,
          secretsEncryptStatusArgs(),
        )
      : await this.run(scope.obj, status, leader, phase, secretsEncryptArgs(command));
    if (outcome.state === 'failed')
      return this.fail(
        scope,
        status,
        now,
        `secrets-encrypt ${command} failed on ${leader.metadata.name}: ${outcome.message}`,
      );
    if (outcome.state !== 'succeeded') {
      this.set(
        scope,
        status,
        now,
        phase,
        `${phase}: ${outcome.state === 'busy' ? outcome.message : `running on ${leader.metadata.name}`}`,
      );
      return WAIT_MS;
    }
    const reported = encryptionStageIn(outcome.output);
    if (phase === 'Reencrypt' && (reported === 'reencrypt_request' || reported === 'reencrypt_active')) {
      const next: Status = { ...status, stage: reported, checks: (status.checks ?? -1) + 1 };
      this.set(scope, next, now, phase, `${leader.metadata.name} re-encrypts the Secrets (${reported})`);
      return REENCRYPT_CHECK_MS;
    }
    if (reported !== stage) {
      return this.fail(
        scope,
        status,
        now,
        `after secrets-encrypt ${command}, ${leader.metadata.name} reports the rotation stage ${reported ?? '(none)'}, not ${stage}`,
      );
    }
    const next: Status = { ...status, phase: restart, stage: reported, restarted: [] };
    delete next.checks;
    this.set(
      scope,
      next,
      now,
      restart,
      `${phase} done on ${leader.metadata.name}; restarting the other servers`,
    );
    return next;
  }

  /** Every other server restarts, one at a time, and must report the leader's stage. */
  private async restartPhase(
    scope: ReconcileScope<K3sControlPlane>,
    status: Status,
    leader: Machine,
    servers: readonly Machine[],
    now: Date,
  ): Promise<Status | number | undefined> {
    const restarted = status.restarted ?? [];
    const server = servers.find((m) => m !== leader && !restarted.includes(m.metadata.name!));
    if (server) {
      const outcome = await this.run(scope.obj, status, server, status.phase, secretsEncryptRestartArgs());
      if (outcome.state === 'failed')
        return this.fail(scope, status, now, `${server.metadata.name} did not restart: ${outcome.message}`);
      if (outcome.state !== 'succeeded') {
        this.set(scope, status, now, status.phase, `restarting ${server.metadata.name}`);
        return WAIT_MS;
      }
      const reported = encryptionStageIn(outcome.output);
      if (reported !== status.stage) {
        return this.fail(
          scope,
          status,
          now,
          `${server.metadata.name} reports the rotation stage ${reported ?? '(none)'} after its restart, and the leader ${status.stage}: the servers disagree`,
        );
      }
      const next: Status = { ...status, restarted: [...restarted, server.metadata.name!] };
      this.set(scope, next, now, status.phase, `restarted ${next.restarted!.join(', ')}`);
      return next;
    }
    const phase = NEXT_AFTER_RESTART[status.phase]!;
    const next: Status = { ...status, phase, restarted: [] };
    if (phase === 'Done') {
      const done: Status = { ...next, completionTime: toRFC3339(now) };
      delete done.restarted;
      this.set(
        scope,
        done,
        now,
        'Done',
        `the encryption key was rotated; every Secret is written with the new key`,
      );
      void this.deps.recorder.event(scope.obj, {
        type: 'Normal',
        reason: 'EncryptionKeyRotationDone',
        action: 'RotateEncryptionKeys',
        note: `encryption key rotation ${status.generation} done`,
      });
      return undefined;
    }
    this.set(scope, next, now, phase, `${phase} starting on ${leader.metadata.name}`);
    return next;
  }

  private run(kcp: K3sControlPlane, status: Status, machine: Machine, phase: string, args: string[]) {
    const secret = planSecretOf(this.deps.caches, machine);
    if (!secret)
      return Promise.resolve({ state: 'busy' as const, message: `${machine.metadata.name} has no plan yet` });
    return advancePlanOperation(this.deps.secrets, secret, {
      id: `encryption-${kcp.metadata.uid}-${status.generation}-${phase}`,
      instruction: { name: 'secrets-encrypt', command: 'sh', args, saveOutput: true, timeoutSeconds: 900 },
    });
  }

  private fail(scope: ReconcileScope<K3sControlPlane>, status: Status, now: Date, why: string): undefined {
    const message = `${why}. Secrets stay readable with the keys the servers hold; if they are not, restore an etcd snapshot taken before the rotation. Raise spec.rotateEncryptionKeys.generation to try again`;
    this.set(
      scope,
      { ...status, phase: 'Failed', completionTime: toRFC3339(now), message: message.slice(0, 2048) },
      now,
      'Failed',
      message,
    );
    void this.deps.recorder.event(scope.obj, {
      type: 'Warning',
      reason: 'EncryptionKeyRotationFailed',
      action: 'RotateEncryptionKeys',
      note: message.slice(0, 1024),
    });
    return undefined;
  }

  private set(
    scope: ReconcileScope<K3sControlPlane>,
    status: Status,
    now: Date,
    reason: string,
    message: string,
  ): void {
    const healthy = status.phase === 'Done';
    setOperationStatus(
      scope,
      { rotateEncryptionKeys: status },
      {
        type: ENCRYPTION_CONDITION,
        status: healthy ? ConditionStatus.True : ConditionStatus.False,
        reason,
        message,
      },
      now,
    );
  }
}
