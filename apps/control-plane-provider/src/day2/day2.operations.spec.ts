import type { V1Secret } from '@kubernetes/client-node';
import {
  RESOURCES,
  type Cluster,
  type EtcdSnapshot,
  type K3sConfig,
  type K3sControlPlane,
  type Machine,
} from '@capstan/api';
import { SECRETS, type KubeClient } from '@capstan/kube';
import { InMemoryApiServer } from '@capstan/kube/testing';
import {
  decodeSecretData,
  encodeSecretData,
  gzipJson,
  MACHINE_NAME_LABEL,
  PLAN_KEYS,
  planChecksum,
  planSecretName,
  type MachinePlan,
} from '@capstan/node-agent';
import { inMemoryControllerHost, type InMemoryControllerHost } from '@capstan/provider-kit/testing';
import { eventually } from '@capstan/testing';
import { day2Controller } from './day2.controller.js';

// Certificate and encryption-key rotation on the in-memory API server: the test plays each server's node agent (it
// reports its certificate check in the plan Secret and answers the rotation plans). The controller rotates the
// servers whose certificates expire within the window, one at a time, recording each server's expiry on its
// K3sConfig; and it moves an encryption key rotation through Rancher's phases only while every server reports the
// stage the leader reached.
const NS = 'certs';
const DAY = 86_400_000;
const SERVERS = ['demo-cp-a', 'demo-cp-b', 'demo-cp-c'];

describe('the day-2 controller: certificate rotation', () => {
  let server: InMemoryApiServer;
  let client: KubeClient;
  let host: InMemoryControllerHost;
  let kcp: K3sControlPlane;
  const now = new Date('2026-11-28T10:00:00Z');

  const check = (daysLeft: number) =>
    JSON.stringify([
      {
        filename: 'serving-kube-apiserver.crt',
        expiryTime: new Date(now.getTime() + daysLeft * DAY).toISOString(),
      },
    ]);
  const secrets = () => client.resource<V1Secret>(SECRETS);
  const planOf = async (machine: string) => {
    const data = decodeSecretData(
      (await secrets().get({ namespace: NS, name: planSecretName(machine) })).data,
    );
    return { data, plan: JSON.parse(data[PLAN_KEYS.plan]?.toString('utf8') ?? '{}') as MachinePlan };
  };
  /** The agent of `machine` applied its current plan: the rotation printed a check with `daysLeft`. */
  const apply = (machine: string, daysLeft: number) =>
    applied(machine, { 'certificate-rotate': `Certificates rotated\n${check(daysLeft)}` });
  /** The agent of `machine` applied its current plan, and its instructions printed `outputs`. */
  const applied = async (machine: string, outputs: Record<string, string>) => {
    const secret = await secrets().get({ namespace: NS, name: planSecretName(machine) });
    const data = decodeSecretData(secret.data);
    const checksum = planChecksum(data[PLAN_KEYS.plan]!);
    await secrets().replace({
      ...secret,
      data: encodeSecretData({
        ...data,
        [PLAN_KEYS.state]: Buffer.from('succeeded'),
        [PLAN_KEYS.appliedChecksum]: Buffer.from(checksum),
        [PLAN_KEYS.lastApplyTime]: Buffer.from(new Date().toISOString()),
        [PLAN_KEYS.appliedOutput]: gzipJson(outputs),
      }),
    });
  };
  const rotating = (machine: string) =>
    eventually(async () => (await planOf(machine)).plan.instructions?.[0]?.name === 'certificate-rotate', {
      message: `${machine} given the rotation plan`,
    });

  beforeEach(async () => {
    server = new InMemoryApiServer([
      RESOURCES.Cluster,
      RESOURCES.K3sControlPlane,
      RESOURCES.EtcdSnapshot,
      RESOURCES.Machine,
      RESOURCES.K3sConfig,
      SECRETS,
    ]);
    client = server.client({ fieldManager: 'test' });
    host = inMemoryControllerHost(client, { serviceOptions: { syncPeriodSeconds: 3600 } });
    day2Controller({ now: () => now }).register(host);
    await client.resource<Cluster>(RESOURCES.Cluster).create({
      apiVersion: RESOURCES.Cluster.apiVersion,
      kind: 'Cluster',
      metadata: { namespace: NS, name: 'demo' },
      spec: {
        controlPlaneRef: {
          apiGroup: RESOURCES.K3sControlPlane.group,
          kind: 'K3sControlPlane',
          name: 'demo-cp',
        },
      },
    } as Cluster);
    kcp = await client.resource<K3sControlPlane>(RESOURCES.K3sControlPlane).create({
      apiVersion: RESOURCES.K3sControlPlane.apiVersion,
      kind: 'K3sControlPlane',
      metadata: { namespace: NS, name: 'demo-cp' },
      spec: {
        replicas: 3,
        version: 'v1.34.4',
        machineTemplate: {
          spec: {
            infrastructureRef: {
              apiGroup: 'infrastructure.capstan.dev',
              kind: 'SimMachineTemplate',
              name: 'x',
            },
          },
        },
      },
    } as K3sControlPlane);
    kcp = await client
      .resource<K3sControlPlane>(RESOURCES.K3sControlPlane)
      .replaceStatus({ ...kcp, status: { initialization: { controlPlaneInitialized: true } } });
    for (const [index, name] of SERVERS.entries()) {
      await client.resource<K3sConfig>(RESOURCES.K3sConfig).create({
        apiVersion: RESOURCES.K3sConfig.apiVersion,
        kind: 'K3sConfig',
        metadata: { namespace: NS, name },
        spec: {},
      } as K3sConfig);
      const machine = await client.resource<Machine>(RESOURCES.Machine).create({
        apiVersion: RESOURCES.Machine.apiVersion,
        kind: 'Machine',
        metadata: {
          namespace: NS,
          name,
          labels: { 'cluster.x-k8s.io/cluster-name': 'demo', 'cluster.x-k8s.io/control-plane': '' },
          // Oldest first: a, b, c.
          creationTimestamp: new Date(now.getTime() - (10 - index) * 60_000),
          ownerReferences: [
            {
              apiVersion: RESOURCES.K3sControlPlane.apiVersion,
              kind: 'K3sControlPlane',
              name: 'demo-cp',
              uid: kcp.metadata.uid!,
              controller: true,
            },
          ],
        },
        spec: {
          clusterName: 'demo',
          bootstrap: { configRef: { apiGroup: RESOURCES.K3sConfig.group, kind: 'K3sConfig', name } },
          infrastructureRef: { apiGroup: 'infrastructure.capstan.dev', kind: 'SimMachine', name },
        },
      } as Machine);
      await client.resource<Machine>(RESOURCES.Machine).replaceStatus({
        ...machine,
        status: {
          nodeRef: { name },
          conditions: [
            {
              type: 'NodeReady',
              status: 'True',
              reason: 'NodeReady',
              message: '',
              lastTransitionTime: now.toISOString(),
            },
          ],
        },
      });
      const plan = Buffer.from(
        JSON.stringify({ periodicInstructions: [{ name: 'certificate-expiry', command: 'sh' }] }),
      );
      await secrets().create({
        metadata: {
          namespace: NS,
          name: planSecretName(name),
          labels: { 'cluster.x-k8s.io/cluster-name': 'demo', [MACHINE_NAME_LABEL]: name },
        },
        data: encodeSecretData({
          [PLAN_KEYS.plan]: plan,
          [PLAN_KEYS.state]: Buffer.from('succeeded'),
          [PLAN_KEYS.appliedChecksum]: Buffer.from(planChecksum(plan)),
          // a and b were issued 350 days ago; c was replaced last month.
          [PLAN_KEYS.periodicOutput]: gzipJson({
            'certificate-expiry': { stdout: check(index < 2 ? 15 : 335), exitCode: 0, failures: 0 },
          }),
        }),
      });
    }
    await host.manager.start();
  });
  afterEach(async () => {
    await host.stop();
    await client.close();
  });

  const annotationOf = async (name: string) =>
    (await client.resource<K3sConfig>(RESOURCES.K3sConfig).get({ namespace: NS, name })).metadata
      .annotations?.['machine.cluster.x-k8s.io/certificates-expiry'];
  const rotation = async () =>
    (
      await client
        .resource<K3sControlPlane>(RESOURCES.K3sControlPlane)
        .get({ namespace: NS, name: 'demo-cp' })
    ).status?.certificateRotation;

  it('records each server expiry, and rotates those within the window one at a time, oldest first', async () => {
    await eventually(async () => (await annotationOf('demo-cp-c')) === '2027-10-29T10:00:00Z');
    expect(await annotationOf('demo-cp-a')).toBe('2026-12-13T10:00:00Z');
    expect((await planOf('demo-cp-a')).plan.instructions).toBeUndefined();

    await client
      .resource<K3sControlPlane>(RESOURCES.K3sControlPlane)
      .mergePatch(
        { namespace: NS, name: 'demo-cp' },
        { spec: { rollout: { before: { certificatesExpiryDays: 30 } } } },
      );
    await rotating('demo-cp-a');
    expect(await rotation()).toMatchObject({
      phase: 'Rotating',
      reason: 'ExpiringSoon',
      pending: ['demo-cp-a', 'demo-cp-b'],
    });
    // One at a time: b gets its plan only once a reported back; the plan kept the periodic check.
    expect((await planOf('demo-cp-b')).plan.instructions).toBeUndefined();
    expect((await planOf('demo-cp-a')).plan.periodicInstructions?.[0]?.name).toBe('certificate-expiry');
    await apply('demo-cp-a', 365);
    await rotating('demo-cp-b');
    expect(await annotationOf('demo-cp-a')).toBe('2027-11-28T10:00:00Z');
    await apply('demo-cp-b', 365);
    const done = await eventually(async () =>
      (await rotation())?.phase === 'Finished' ? rotation() : undefined,
    );
    expect(done).toMatchObject({ reason: 'ExpiringSoon', rotated: ['demo-cp-a', 'demo-cp-b'] });
    expect((await planOf('demo-cp-c')).plan.instructions).toBeUndefined();
  });

  it('fails, and says why, when a rotation leaves a server inside the window', async () => {
    await eventually(async () => (await annotationOf('demo-cp-a')) !== undefined);
    await client
      .resource<K3sControlPlane>(RESOURCES.K3sControlPlane)
      .mergePatch(
        { namespace: NS, name: 'demo-cp' },
        { spec: { rollout: { before: { certificatesExpiryDays: 30 } } } },
      );
    await rotating('demo-cp-a');
    await apply('demo-cp-a', 20);
    const failed = await eventually(async () =>
      (await rotation())?.phase === 'Failed' ? rotation() : undefined,
    );
    expect(failed?.message).toMatch(
      /^demo-cp-a was rotated, and its new certificates expire at 2026-12-18T10:00:00Z, still within rollout.before.certificatesExpiryDays \(30\)/,
    );
    expect((await planOf('demo-cp-b')).plan.instructions).toBeUndefined();
  });

  it('rotates as soon as the servers it waited for are Ready again: their Machines wake it', async () => {
    const machines = client.resource<Machine>(RESOURCES.Machine);
    const setNodeReady = async (name: string, status: 'True' | 'False') => {
      const machine = await machines.get({ namespace: NS, name });
      await machines.replaceStatus({
        ...machine,
        status: {
          ...machine.status,
          conditions: [
            {
              type: 'NodeReady',
              status,
              reason: status === 'True' ? 'NodeReady' : 'NodeNotReady',
              message: '',
              lastTransitionTime: new Date().toISOString(),
            },
          ],
        },
      });
    };
    await eventually(async () => (await annotationOf('demo-cp-a')) !== undefined);
    await setNodeReady('demo-cp-b', 'False');
    await client
      .resource<K3sControlPlane>(RESOURCES.K3sControlPlane)
      .mergePatch(
        { namespace: NS, name: 'demo-cp' },
        { spec: { rollout: { before: { certificatesExpiryDays: 30 } } } },
      );
    await eventually(
      async () => {
        const kcp = await client
          .resource<K3sControlPlane>(RESOURCES.K3sControlPlane)
          .get({ namespace: NS, name: 'demo-cp' });
        return (
          kcp.status?.conditions?.find((c) => c.type === 'CertificatesRotated')?.reason === 'WaitingForQuorum'
        );
      },
      { message: 'the rotation waiting for demo-cp-b' },
    );
    expect((await planOf('demo-cp-a')).plan.instructions).toBeUndefined();
    await setNodeReady('demo-cp-b', 'True');
    // Well before the 10 s the rotation would otherwise wait to look again.
    await eventually(
      async () => (await planOf('demo-cp-a')).plan.instructions?.[0]?.name === 'certificate-rotate',
      {
        message: 'demo-cp-a given the rotation plan once demo-cp-b is Ready',
        timeoutMs: 5_000,
      },
    );
  });

  describe('encryption keys', () => {
    const stage = (name: string) => ({
      'secrets-encrypt': `Encryption Status: Enabled\nCurrent Rotation Stage: ${name}`,
    });
    const running = (machine: string, phase: string) =>
      eventually(
        async () =>
          (await planOf(machine)).plan.instructions?.[0]?.env?.some((e) => e.endsWith(`-${phase}`)) === true,
        { message: `${machine} given the ${phase} plan` },
      );
    const keyRotation = async () =>
      (
        await client
          .resource<K3sControlPlane>(RESOURCES.K3sControlPlane)
          .get({ namespace: NS, name: 'demo-cp' })
      ).status?.rotateEncryptionKeys;
    const ask = (spec: Record<string, unknown>) =>
      client
        .resource<K3sControlPlane>(RESOURCES.K3sControlPlane)
        .mergePatch({ namespace: NS, name: 'demo-cp' }, { spec });

    it('runs prepare, rotate and reencrypt on the leader, each followed by the other servers, to Done', async () => {
      await ask({
        k3sConfigSpec: { serverConfig: { secretsEncryption: true } },
        rotateEncryptionKeys: { generation: 1 },
      });
      for (const [phase, restart, reached] of [
        ['Prepare', 'PostPrepareRestart', 'prepare'],
        ['Rotate', 'PostRotateRestart', 'rotate'],
        ['Reencrypt', 'PostReencryptRestart', 'reencrypt_finished'],
      ] as const) {
        await running('demo-cp-a', phase);
        // Nothing else moves while the leader runs the stage.
        expect((await keyRotation())?.phase).toBe(phase);
        await applied('demo-cp-a', stage(reached));
        for (const follower of ['demo-cp-b', 'demo-cp-c']) {
          await running(follower, restart);
          await applied(follower, stage(reached));
        }
      }
      const done = await eventually(async () =>
        (await keyRotation())?.phase === 'Done' ? keyRotation() : undefined,
      );
      expect(done).toMatchObject({ generation: 1, leader: 'demo-cp-a', stage: 'reencrypt_finished' });
    });

    it('waits for a re-encryption K3s runs in the background, asking the leader again until it finished', async () => {
      await ask({
        k3sConfigSpec: { serverConfig: { secretsEncryption: true } },
        rotateEncryptionKeys: { generation: 1 },
      });
      for (const [phase, restart, reached] of [
        ['Prepare', 'PostPrepareRestart', 'prepare'],
        ['Rotate', 'PostRotateRestart', 'rotate'],
      ] as const) {
        await running('demo-cp-a', phase);
        await applied('demo-cp-a', stage(reached));
        for (const follower of ['demo-cp-b', 'demo-cp-c']) {
          await running(follower, restart);
          await applied(follower, stage(reached));
        }
      }
      await running('demo-cp-a', 'Reencrypt');
      await applied('demo-cp-a', stage('reencrypt_active'));
      await running('demo-cp-a', 'Reencrypt-check-0');
      expect(await keyRotation()).toMatchObject({ phase: 'Reencrypt', stage: 'reencrypt_active', checks: 0 });
      await applied('demo-cp-a', stage('reencrypt_finished'));
      await running('demo-cp-b', 'PostReencryptRestart');
      expect(await keyRotation()).toMatchObject({
        phase: 'PostReencryptRestart',
        stage: 'reencrypt_finished',
      });
      expect((await keyRotation())?.checks).toBeUndefined();
    });

    it('fails, saying which server disagrees, when a server reports another stage after its restart', async () => {
      await ask({
        k3sConfigSpec: { serverConfig: { secretsEncryption: true } },
        rotateEncryptionKeys: { generation: 1 },
      });
      await running('demo-cp-a', 'Prepare');
      await applied('demo-cp-a', stage('prepare'));
      await running('demo-cp-b', 'PostPrepareRestart');
      await applied('demo-cp-b', stage('start'));
      const failed = await eventually(async () =>
        (await keyRotation())?.phase === 'Failed' ? keyRotation() : undefined,
      );
      expect(failed?.message).toMatch(
        /^demo-cp-b reports the rotation stage start after its restart, and the leader prepare: the servers disagree\. .*restore an etcd snapshot/,
      );
      expect((await planOf('demo-cp-c')).plan.instructions).toBeUndefined();
    });

    it('refuses a control plane without secrets encryption before any plan', async () => {
      await ask({ rotateEncryptionKeys: { generation: 1 } });
      const failed = await eventually(async () =>
        (await keyRotation())?.phase === 'Failed' ? keyRotation() : undefined,
      );
      expect(failed?.message).toMatch(/^secrets encryption is not enabled on this control plane/);
      expect((await planOf('demo-cp-a')).plan.instructions).toBeUndefined();
    });
  });

  describe('a restore with restoreConfig KubernetesVersion', () => {
    it('sets spec.version back to the snapshot version before the reset, and resumes the Cluster after', async () => {
      const snapshot = await client.resource<EtcdSnapshot>(RESOURCES.EtcdSnapshot).create({
        apiVersion: RESOURCES.EtcdSnapshot.apiVersion,
        kind: 'EtcdSnapshot',
        metadata: { namespace: NS, name: 'before-upgrade' },
        spec: { clusterName: 'demo' },
      } as EtcdSnapshot);
      await client.resource<EtcdSnapshot>(RESOURCES.EtcdSnapshot).replaceStatus({
        ...snapshot,
        status: {
          phase: 'Succeeded',
          fileName: 'on-demand-demo-cp-a-1795860000',
          location: 'file:///var/lib/rancher/k3s/server/db/snapshots/on-demand-demo-cp-a-1795860000',
          machineName: 'demo-cp-a',
          kubernetesVersion: 'v1.33.5',
        },
      });
      const kcps = client.resource<K3sControlPlane>(RESOURCES.K3sControlPlane);
      await kcps.mergePatch(
        { namespace: NS, name: 'demo-cp' },
        {
          spec: {
            etcdSnapshotRestore: {
              name: 'before-upgrade',
              generation: 1,
              restoreConfig: 'KubernetesVersion',
            },
          },
        },
      );
      await eventually(
        async () => (await planOf('demo-cp-a')).plan.instructions?.[0]?.name === 'etcd-restore',
        {
          message: 'the restore plan written',
        },
      );
      expect((await kcps.get({ namespace: NS, name: 'demo-cp' })).spec.version).toBe('v1.33.5');
      const clusters = client.resource<Cluster>(RESOURCES.Cluster);
      expect((await clusters.get({ namespace: NS, name: 'demo' })).spec?.paused).toBe(true);
      await applied('demo-cp-a', { 'etcd-restore': 'Managed etcd cluster membership has been reset' });
      const status = await eventually(async () => {
        const s = (await kcps.get({ namespace: NS, name: 'demo-cp' })).status?.etcdSnapshotRestore;
        return s?.phase === 'Finished' ? s : undefined;
      });
      expect(status).toMatchObject({ name: 'before-upgrade', generation: 1, machineName: 'demo-cp-a' });
      expect((await clusters.get({ namespace: NS, name: 'demo' })).spec?.paused).toBe(false);
    });
  });

  describe('a restore with restoreConfig All', () => {
    const snapshots = () => client.resource<EtcdSnapshot>(RESOURCES.EtcdSnapshot);
    const kcps = () => client.resource<K3sControlPlane>(RESOURCES.K3sControlPlane);
    const saved = async (name: string, status: Partial<EtcdSnapshot['status']>) => {
      const snapshot = await snapshots().create({
        apiVersion: RESOURCES.EtcdSnapshot.apiVersion,
        kind: 'EtcdSnapshot',
        metadata: { namespace: NS, name },
        spec: { clusterName: 'demo' },
      } as EtcdSnapshot);
      await snapshots().replaceStatus({
        ...snapshot,
        status: {
          phase: 'Succeeded',
          fileName: `on-demand-demo-cp-a-${name}`,
          location: `file:///var/lib/rancher/k3s/server/db/snapshots/on-demand-demo-cp-a-${name}`,
          machineName: 'demo-cp-a',
          kubernetesVersion: 'v1.33.5',
          ...status,
        },
      });
    };

    it('puts back the version and the whole k3sConfigSpec the snapshot was saved with, fields added since dropped', async () => {
      await saved('with-config', {
        k3sConfigSpec: { serverConfig: { kubeAPIServerArgs: ['audit-log-maxage=7'] } },
      });
      await kcps().mergePatch(
        { namespace: NS, name: 'demo-cp' },
        {
          spec: {
            k3sConfigSpec: {
              serverConfig: { kubeAPIServerArgs: ['audit-log-maxage=30'] },
              agentConfig: { nodeLabels: ['added=later'] },
            },
            etcdSnapshotRestore: { name: 'with-config', generation: 1, restoreConfig: 'All' },
          },
        },
      );
      await eventually(
        async () => (await planOf('demo-cp-a')).plan.instructions?.[0]?.name === 'etcd-restore',
        { message: 'the restore plan written' },
      );
      const spec = (await kcps().get({ namespace: NS, name: 'demo-cp' })).spec;
      expect(spec.version).toBe('v1.33.5');
      expect(spec.k3sConfigSpec).toEqual({ serverConfig: { kubeAPIServerArgs: ['audit-log-maxage=7'] } });
      await applied('demo-cp-a', { 'etcd-restore': 'Managed etcd cluster membership has been reset' });
      await eventually(async () => {
        const s = (await kcps().get({ namespace: NS, name: 'demo-cp' })).status?.etcdSnapshotRestore;
        return s?.phase === 'Finished' ? s : undefined;
      });
    });

    it('refuses a snapshot that does not record its configuration, naming the way out, and changes nothing', async () => {
      await saved('without-config', {});
      const before = (await kcps().get({ namespace: NS, name: 'demo-cp' })).spec;
      await kcps().mergePatch(
        { namespace: NS, name: 'demo-cp' },
        { spec: { etcdSnapshotRestore: { name: 'without-config', generation: 1, restoreConfig: 'All' } } },
      );
      const failed = await eventually(async () => {
        const s = (await kcps().get({ namespace: NS, name: 'demo-cp' })).status?.etcdSnapshotRestore;
        return s?.phase === 'Failed' ? s : undefined;
      });
      expect(failed.message).toMatch(
        /^EtcdSnapshot without-config does not record the configuration it was saved with .*restoreConfig KubernetesVersion or None$/,
      );
      const after = (await kcps().get({ namespace: NS, name: 'demo-cp' })).spec;
      expect(after.version).toBe(before.version);
      expect(after.k3sConfigSpec).toEqual(before.k3sConfigSpec);
      expect((await planOf('demo-cp-a')).plan.instructions).toBeUndefined();
    });
  });
});
