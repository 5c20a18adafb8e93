import { ConditionReason, type Machine, type SimCluster, type SimMachine } from '@capstan/api';
import type { ParsedK3sBootstrap } from '@capstan/k3s-bootstrap';
import { SimConditionReason, type SimClusterRef } from '@capstan/sim';
import type { ServerOutcome } from './machine-host.js';
import {
  bootSchedule,
  bootstrapDataVerdict,
  clusterRefOf,
  firstBootVerdict,
  hostOf,
  prerequisites,
  provisionedObservation,
  reloadVerdict,
  restartVerdict,
  RETRY_MISSING_DATA_MS,
} from './simmachine.phases.js';

const simMachine = (spec: SimMachine['spec'] = {}): SimMachine => ({
  apiVersion: 'infrastructure.capstan.dev/v1alpha1',
  kind: 'SimMachine',
  metadata: { name: 'm', namespace: 'ns', uid: 'u-1', generation: 1 },
  spec,
});

const machine = (dataSecretName?: string): Machine => ({
  apiVersion: 'cluster.x-k8s.io/v1beta2',
  kind: 'Machine',
  metadata: { name: 'm', namespace: 'ns' },
  spec: { clusterName: 'alpha', bootstrap: dataSecretName ? { dataSecretName } : {} } as Machine['spec'],
});

const cluster: SimClusterRef = {
  namespace: 'ns',
  clusterName: 'alpha',
  mode: 'dedicated',
  endpoint: { host: '127.0.0.1', port: 31001 },
};

const parsed = { role: 'agent', version: 'v1.31.4+k3s1' } as ParsedK3sBootstrap;

describe('SimMachine phases', () => {
  describe('prerequisites', () => {
    it('fails an injected provisioning failure before anything else', () => {
      expect(
        prerequisites(simMachine({ failProvisioning: 'rack on fire' }), machine('data'), cluster),
      ).toEqual({
        halt: {
          ready: { status: 'False', reason: SimConditionReason.ProvisioningFailed, message: 'rack on fire' },
        },
      });
    });

    it('waits for the SimCluster, then for the bootstrap data secret', () => {
      expect(prerequisites(simMachine(), machine('data'), undefined)).toMatchObject({
        halt: { ready: { reason: ConditionReason.WaitingForClusterInfrastructureReady } },
      });
      expect(prerequisites(simMachine(), machine(), cluster)).toMatchObject({
        halt: { ready: { reason: ConditionReason.WaitingForBootstrapData } },
      });
      expect(prerequisites(simMachine(), machine('data'), cluster)).toEqual({ cluster, secretName: 'data' });
    });
  });

  describe('boot delay', () => {
    const clock = { now: 10_000, bootAt: undefined, jitter: 0.5, random: () => 0.5 };

    it('boots at once without a delay', () => {
      expect(bootSchedule(simMachine(), clock)).toEqual({ bootAt: 10_000 });
    });

    it('waits the delay plus jitter, then boots at the time first chosen', () => {
      const booting = bootSchedule(simMachine({ provisioningDelaySeconds: 2 }), clock);
      expect(booting).toMatchObject({
        bootAt: 12_500,
        halt: { halt: { ready: { reason: SimConditionReason.Booting } }, requeueAfter: 2_500 },
      });
      // A later reconcile keeps the time chosen (no new jitter), and boots once it is reached.
      const later = { ...clock, now: 12_000, bootAt: 12_500, random: () => 1 };
      expect(bootSchedule(simMachine({ provisioningDelaySeconds: 2 }), later).halt?.requeueAfter).toBe(500);
      expect(bootSchedule(simMachine({ provisioningDelaySeconds: 2 }), { ...later, now: 12_500 })).toEqual({
        bootAt: 12_500,
      });
    });
  });

  describe('bootstrap data', () => {
    it('runs parsed data, waits for missing data and fails on invalid data', () => {
      expect(bootstrapDataVerdict({ kind: 'parsed', parsed })).toBe(parsed);
      expect(bootstrapDataVerdict({ kind: 'missing', message: 'no secret' })).toEqual({
        halt: {
          ready: { status: 'False', reason: ConditionReason.WaitingForBootstrapData, message: 'no secret' },
        },
        requeueAfter: RETRY_MISSING_DATA_MS,
      });
      expect(bootstrapDataVerdict({ kind: 'invalid', message: 'bad yaml' })).toEqual({
        halt: {
          ready: { status: 'False', reason: SimConditionReason.BootstrapDataInvalid, message: 'bad yaml' },
          bootstrap: { status: 'False', reason: SimConditionReason.BootstrapFailed, message: 'bad yaml' },
        },
      });
    });

    it('leaves a provisioned machine without its data provisioned, with a node that cannot start', () => {
      expect(reloadVerdict({ kind: 'parsed', parsed })).toBe(parsed);
      expect(reloadVerdict(undefined)).toEqual({
        halt: {
          ready: { status: 'True', reason: ConditionReason.Provisioned, message: 'provisioned' },
          node: {
            status: 'False',
            reason: SimConditionReason.NodeRegistrationFailed,
            message: 'the host cannot start again: the Machine names no bootstrap data secret',
          },
        },
        requeueAfter: RETRY_MISSING_DATA_MS,
      });
      expect(reloadVerdict({ kind: 'missing', message: 'gone' })).toMatchObject({
        halt: { node: { message: 'the host cannot start again: gone' } },
      });
    });
  });

  describe('server', () => {
    const up = { ok: true, api: { url: 'https://127.0.0.1:31001' } } as ServerOutcome;
    const waitingForFirst: ServerOutcome = {
      ok: false,
      reason: SimConditionReason.WaitingForControlPlane,
      message: 'waiting',
      retryMs: 3_000,
    };
    const badCa: ServerOutcome = {
      ok: false,
      reason: SimConditionReason.BootstrapDataInvalid,
      message: 'no CA',
      invalidData: true,
    };

    it('goes on once the cluster API answers, waits and retries, or fails on invalid data (first boot)', () => {
      expect(firstBootVerdict(up)).toEqual({
        apiServer: {
          status: 'True',
          reason: SimConditionReason.APIServerRunning,
          message: 'the cluster API answers at https://127.0.0.1:31001',
        },
      });
      expect(firstBootVerdict(waitingForFirst)).toEqual({
        halt: {
          ready: { status: 'False', reason: SimConditionReason.WaitingForControlPlane, message: 'waiting' },
        },
        requeueAfter: 3_000,
      });
      expect(firstBootVerdict(badCa)).toMatchObject({
        halt: { ready: { reason: SimConditionReason.BootstrapDataInvalid }, bootstrap: { message: 'no CA' } },
      });
    });

    it('reports a provisioned server whose API does not come back without halting', () => {
      expect(restartVerdict(up)).toMatchObject({ status: 'True' });
      expect(restartVerdict(waitingForFirst)).toEqual({
        status: 'False',
        reason: SimConditionReason.WaitingForControlPlane,
        message: 'waiting',
      });
    });
  });

  describe('host', () => {
    it('reports the contract fields and the conditions of a booted host', () => {
      const observed = provisionedObservation({
        parsed,
        sentinel: '/state/ns/m/run/cluster-api/bootstrap-success.complete',
        node: { phase: 'Registered', message: 'Node m is Ready' },
        addresses: [{ type: 'Hostname', address: 'm' }],
        failureDomain: 'fd-1',
      });
      expect(observed).toEqual({
        ready: {
          status: 'True',
          reason: ConditionReason.Provisioned,
          message: 'booted as K3s agent v1.31.4+k3s1',
        },
        bootstrap: {
          status: 'True',
          reason: SimConditionReason.BootstrapExecSucceeded,
          message:
            'bootstrap data ran; sentinel written at /state/ns/m/run/cluster-api/bootstrap-success.complete',
        },
        apiServer: undefined,
        node: { status: 'True', reason: SimConditionReason.NodeRegistered, message: 'Node m is Ready' },
        provisioned: true,
        addresses: [{ type: 'Hostname', address: 'm' }],
        failureDomain: 'fd-1',
      });
    });

    it('keeps a recorded provider ID, else derives sim://<namespace>/<name>', () => {
      expect(hostOf(simMachine(), cluster, parsed).providerID).toBe('sim://ns/m');
      expect(hostOf(simMachine({ providerID: 'sim://ns/old' }), cluster, parsed).providerID).toBe(
        'sim://ns/old',
      );
    });
  });

  describe('cluster', () => {
    const simCluster = (status?: SimCluster['status']): SimCluster => ({
      apiVersion: 'infrastructure.capstan.dev/v1alpha1',
      kind: 'SimCluster',
      metadata: { name: 'alpha', namespace: 'ns' },
      spec: { controlPlaneEndpoint: { host: '127.0.0.1', port: 31001 } },
      ...(status && { status }),
    });

    it('is ready for machines once its SimCluster is provisioned', () => {
      expect(clusterRefOf('alpha', simCluster())).toBeUndefined();
      expect(clusterRefOf(undefined, simCluster({ initialization: { provisioned: true } }))).toBeUndefined();
      expect(clusterRefOf('alpha', simCluster({ initialization: { provisioned: true } }))).toEqual(cluster);
    });
  });
});
