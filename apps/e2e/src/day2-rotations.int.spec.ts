import 'reflect-metadata';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { connect } from 'node:tls';
import { CoreV1Api, KubeConfig, type V1Secret } from '@kubernetes/client-node';
import {
  getCondition,
  RESOURCES,
  type Cluster,
  type K3sConfig,
  type K3sControlPlane,
  type Machine,
} from '@capstan/api';
import { createKubeClient, SECRETS, type KubeClient } from '@capstan/kube';
import { eventually, runBuiltCli, startCapstan, type CapstanUnderTest } from '@capstan/testing';
import {
  controlPlaneName,
  createSimK3sCluster,
  deleteClusterAndWait,
  FAST_SIM_ENV,
  waitForClusterAvailable,
} from './sim-cluster-fixture.js';

// Certificate and encryption-key rotation in place with real parts (docs/day2.md): the five services, a dedicated sim
// cluster of three servers whose certificates were issued 350 days ago (CAPSTAN_SIM_CERTIFICATE_AGE_DAYS) and whose
// Secrets are encrypted at rest, node agents reporting `k3s certificate check` and applying `k3s certificate rotate`
// and `k3s secrets-encrypt`, the cluster's real kube-apiserver reloading its serving certificate and encryption
// configuration, and its own etcd read directly to see which key encrypted a Secret.

const CLUSTER = 'certs';
const KCP = controlPlaneName(CLUSTER);
const STEP_MS = 240_000;
const DAY_MS = 86_400_000;

describe('certificate and encryption-key rotation of a three-server K3s cluster on sim machines', () => {
  let capstan: CapstanUnderTest;
  let client: KubeClient;
  let namespace: string;

  const until = <T>(what: string, probe: () => Promise<T | undefined | false>) =>
    eventually(probe, { message: what, timeoutMs: STEP_MS, intervalMs: 250 });
  const kcps = () => client.resource<K3sControlPlane>(RESOURCES.K3sControlPlane);
  const servers = async () =>
    (await client.resource<Machine>(RESOURCES.Machine).list({ namespace })).items
      .filter((m) => m.spec.clusterName === CLUSTER)
      .sort((a, b) => a.metadata.name!.localeCompare(b.metadata.name!));
  const daysLeft = (date: string | Date | undefined) =>
    date === undefined ? NaN : (new Date(date).getTime() - Date.now()) / DAY_MS;
  const kubeconfigText = async () => {
    const secret = await client.resource<V1Secret>(SECRETS).get({ namespace, name: `${CLUSTER}-kubeconfig` });
    return Buffer.from(secret.data!['value']!, 'base64').toString('utf8');
  };
  /** The serving certificate the cluster's API server presents now: when it expires. */
  const servedNotAfter = async (): Promise<Date> => {
    const cluster = await client.resource<Cluster>(RESOURCES.Cluster).get({ namespace, name: CLUSTER });
    const { host, port } = cluster.spec!.controlPlaneEndpoint!;
    return new Promise((resolve, reject) => {
      const socket = connect({ host, port, servername: 'localhost', rejectUnauthorized: false }, () => {
        const validTo = socket.getPeerCertificate().valid_to;
        socket.end();
        resolve(new Date(validTo));
      });
      socket.setTimeout(5000, () => socket.destroy(new Error('TLS handshake timed out')));
      socket.on('error', reject);
    });
  };
  const rotationSettled = (
    check: (s: NonNullable<K3sControlPlane['status']>['certificateRotation']) => boolean,
  ) =>
    until('the certificate rotation settled', async () => {
      const kcp = await kcps().get({ namespace, name: KCP });
      const status = kcp.status?.certificateRotation;
      if (status && (status.phase === 'Finished' || status.phase === 'Failed') && check(status))
        return status;
      // What a timeout reports: where the rotation stands.
      const condition = getCondition(kcp.status?.conditions, 'CertificatesRotated');
      throw new Error(`rotation ${JSON.stringify(status)}; condition ${JSON.stringify(condition)}`);
    });

  beforeAll(async () => {
    capstan = await startCapstan('certs', {
      env: { ...FAST_SIM_ENV, CAPSTAN_SIM_NODE_AGENT: 'in-process', CAPSTAN_SIM_CERTIFICATE_AGE_DAYS: '350' },
    });
    namespace = capstan.namespace.name;
    client = createKubeClient(capstan.namespace.kc);
    await createSimK3sCluster(client, {
      namespace,
      name: CLUSTER,
      version: 'v1.34.4',
      controlPlaneReplicas: 3,
      workers: 0,
      k3sConfigSpec: { serverConfig: { secretsEncryption: true } },
    });
    await waitForClusterAvailable(client, namespace, CLUSTER, STEP_MS);
    await until(
      'three servers ready',
      async () => (await kcps().get({ namespace, name: KCP })).status?.readyReplicas === 3,
    );
  }, STEP_MS * 2);

  afterAll(async () => {
    try {
      if (client) await deleteClusterAndWait(client, namespace, CLUSTER);
    } finally {
      await client?.close();
      await capstan?.stop({ keepLogs: process.env['CERTS_KEEP_LOGS'] === '1' });
    }
  }, STEP_MS);

  it(
    'rotates certificates near expiry in place, one server at a time, with the cluster Available throughout',
    async () => {
      // Every server reports its certificates (issued 350 days ago: 15 days left) on its Machine.
      const before = await until('every server reported its certificates', async () => {
        const machines = await servers();
        return machines.length === 3 && machines.every((m) => m.status?.certificatesExpiryDate) && machines;
      });
      for (const machine of before) expect(daysLeft(machine.status?.certificatesExpiryDate)).toBeLessThan(16);
      expect(daysLeft(await servedNotAfter())).toBeLessThan(16);
      const kubeconfigBefore = await kubeconfigText();

      // Watch availability while the rotation runs: the Cluster's Available condition and the API answering.
      const outages: string[] = [];
      let watching = true;
      const watcher = (async () => {
        while (watching) {
          const cluster = await client.resource<Cluster>(RESOURCES.Cluster).get({ namespace, name: CLUSTER });
          const available = getCondition(cluster.status?.conditions, 'Available');
          if (available?.status !== 'True')
            outages.push(`Available ${available?.status}: ${available?.message}`);
          await servedNotAfter().catch((error: Error) => outages.push(`API: ${error.message}`));
          await new Promise((r) => setTimeout(r, 500));
        }
      })();

      await kcps().mergePatch(
        { namespace, name: KCP },
        { spec: { rollout: { before: { certificatesExpiryDays: 30 } } } },
      );
      const status = await rotationSettled((s) => s?.reason === 'ExpiringSoon');
      watching = false;
      await watcher;
      expect(status).toMatchObject({ phase: 'Finished', reason: 'ExpiringSoon' });
      // Oldest server first, each once.
      expect(status.rotated).toEqual(
        [...before]
          .sort(
            (a, b) =>
              Date.parse(`${a.metadata.creationTimestamp}`) - Date.parse(`${b.metadata.creationTimestamp}`),
          )
          .map((m) => m.metadata.name),
      );
      expect(outages).toEqual([]);

      // No Machine was replaced; each now reports a year.
      const after = await until('every server reports its new certificates', async () => {
        const machines = await servers();
        return machines.every((m) => daysLeft(m.status?.certificatesExpiryDate) > 364) && machines;
      });
      expect(after.map((m) => m.metadata.uid)).toEqual(before.map((m) => m.metadata.uid));
      const config = await client
        .resource<K3sConfig>(RESOURCES.K3sConfig)
        .get({ namespace, name: after[0]!.spec.bootstrap!.configRef!.name });
      expect(config.metadata.annotations?.['machine.cluster.x-k8s.io/certificates-expiry']).toBe(
        after[0]!.status?.certificatesExpiryDate,
      );
      // The API server serves the renewed certificate, and the admin kubeconfig followed the rotation.
      await until(
        'the API server serves the renewed certificate',
        async () => daysLeft(await servedNotAfter()) > 364,
      );
      const kubeconfig = await until('the admin kubeconfig re-issued', async () => {
        const text = await kubeconfigText();
        return text !== kubeconfigBefore && text;
      });
      const kc = new KubeConfig();
      kc.loadFromString(kubeconfig);
      const nodes = await kc.makeApiClient(CoreV1Api).listNode();
      expect(nodes.items).toHaveLength(3);
      const condition = getCondition(
        (await kcps().get({ namespace, name: KCP })).status?.conditions,
        'CertificatesRotated',
      );
      expect(condition).toMatchObject({ status: 'True', reason: 'Rotated' });
    },
    STEP_MS * 2,
  );

  it(
    'rotates on request (a new generation), and refuses a window no rotation could leave',
    async () => {
      const before = await servers();
      const cli = (...args: string[]) =>
        runBuiltCli(...args, '-n', namespace, '--kubeconfig', process.env['CAPSTAN_TEST_KUBECONFIG']!);
      const rotated = await cli('certs', 'rotate', CLUSTER);
      expect(rotated.stderr).toContain('rotated the certificates of');
      expect(rotated.status).toBe(0);
      const status = await rotationSettled((s) => s?.reason === 'Requested' && s.generation === 1);
      expect(status).toMatchObject({ phase: 'Finished', reason: 'Requested', generation: 1 });
      expect(status.rotated).toHaveLength(3);
      const after = await until('the new expiry reported', async () => {
        const machines = await servers();
        return (
          machines.every(
            (m, i) =>
              Date.parse(m.status!.certificatesExpiryDate!) >
              Date.parse(before[i]!.status!.certificatesExpiryDate!),
          ) && machines
        );
      });
      expect(after.map((m) => m.metadata.uid)).toEqual(before.map((m) => m.metadata.uid));
      // The fleet view: every server, a year left, the last rotation.
      const listed = await cli('certs');
      expect(listed.status).toBe(0);
      const rows = listed.stdout.trim().split('\n').slice(1);
      expect(rows).toHaveLength(3);
      for (const row of rows) expect(row).toMatch(/\b36[45]d\s+30d\s+Finished \(Requested\)/);

      await expect(
        kcps().mergePatch(
          { namespace, name: KCP },
          { spec: { rollout: { before: { certificatesExpiryDays: 400 } } } },
        ),
      ).rejects.toThrow(/certificatesExpiryDays must be below 365/);
    },
    STEP_MS * 2,
  );

  it(
    "rotates the secrets-encryption key in Rancher's phases, the Secret readable after each, and re-encrypted with the new key",
    async () => {
      const kc = new KubeConfig();
      kc.loadFromString(await kubeconfigText());
      const workload = kc.makeApiClient(CoreV1Api);
      await workload.createNamespacedSecret({
        namespace: 'default',
        body: { metadata: { name: 'vault' }, stringData: { password: 'hunter2' } },
      });
      /**
       * The key that encrypted the Secret in the cluster's own etcd (`k8s:enc:aescbc:v1:<key>:...`), as each server's
       * etcd member holds it (a serializable read answers from the member's own data): all three must agree.
       */
      const storedWith = async (): Promise<string> => {
        const etcdDir = join(capstan.simStateDir, 'clusters', namespace, CLUSTER, 'etcd');
        const keys = new Set<string>();
        const members = readdirSync(etcdDir).filter((name) => existsSync(join(etcdDir, name, 'ports.json')));
        expect(members).toHaveLength(3);
        for (const member of members) {
          const { client: port } = JSON.parse(readFileSync(join(etcdDir, member, 'ports.json'), 'utf8')) as {
            client: number;
          };
          const response = await fetch(`http://127.0.0.1:${port}/v3/kv/range`, {
            method: 'POST',
            body: JSON.stringify({
              key: Buffer.from('/registry/secrets/default/vault').toString('base64'),
              serializable: true,
            }),
          });
          const body = (await response.json()) as { kvs?: { value: string }[] };
          const value = Buffer.from(body.kvs![0]!.value, 'base64').toString('latin1');
          // Key names hold the RFC 3339 time they were made, colons included (K3s names them so).
          const match = /^k8s:enc:aescbc:v1:(aescbckey-\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z):/.exec(value);
          if (!match) throw new Error(`the Secret is stored as ${value.slice(0, 24)}... on ${member}`);
          keys.add(match[1]!);
        }
        if (keys.size !== 1) throw new Error(`the members disagree: ${[...keys].join(', ')}`);
        return [...keys][0]!;
      };
      const readable = (phase: string) =>
        until(`the Secret readable in ${phase}`, async () => {
          const fresh = new KubeConfig();
          fresh.loadFromString(await kubeconfigText());
          const secret = await fresh
            .makeApiClient(CoreV1Api)
            .readNamespacedSecret({ name: 'vault', namespace: 'default' })
            .catch(() => undefined);
          return Buffer.from(secret?.data?.['password'] ?? '', 'base64').toString('utf8') === 'hunter2';
        });
      const firstKey = await storedWith();
      expect(firstKey).toMatch(/^aescbckey-/);

      await kcps().mergePatch(
        { namespace, name: KCP },
        { spec: { rotateEncryptionKeys: { generation: 1 } } },
      );
      const seen: string[] = [];
      for (;;) {
        const status = (await kcps().get({ namespace, name: KCP })).status?.rotateEncryptionKeys;
        const phase = status?.generation === 1 ? status.phase : undefined;
        if (phase && phase !== seen.at(-1)) {
          seen.push(phase);
          await readable(phase);
        }
        if (phase === 'Done' || phase === 'Failed') {
          expect(status).toMatchObject({ phase: 'Done', stage: 'reencrypt_finished' });
          break;
        }
        await new Promise((r) => setTimeout(r, 100));
      }
      // Every phase was seen (the other two servers restart after each command, so no phase is instantaneous).
      expect(seen).toEqual([
        'Prepare',
        'PostPrepareRestart',
        'Rotate',
        'PostRotateRestart',
        'Reencrypt',
        'PostReencryptRestart',
        'Done',
      ]);
      const secondKey = await storedWith();
      expect(secondKey).toMatch(/^aescbckey-/);
      expect(secondKey).not.toBe(firstKey);
      await readable('the end');
      const condition = getCondition(
        (await kcps().get({ namespace, name: KCP })).status?.conditions,
        'EncryptionKeysRotated',
      );
      expect(condition).toMatchObject({ status: 'True', reason: 'Done' });
    },
    STEP_MS * 2,
  );
});
