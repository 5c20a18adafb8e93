import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { readFileSync } from 'node:fs';
import { CoreV1Api, CustomObjectsApi, setHeaderOptions, VersionApi } from '@kubernetes/client-node';
import { PatchStrategy } from '@capstan/kube';
import { eventually, repoRoot, startCapstan, type CapstanUnderTest } from '@capstan/testing';
import { CAPI, createSimCluster, deleteClusterAndWait, readyNodes, workloadClient } from './cluster-fixture.js';

interface MachineLike {
  metadata: { name: string; labels?: Record<string, string> };
  spec?: { providerID?: string };
  status?: { conditions?: { type: string; status: string; reason: string; message?: string }[] };
}
const planApplied = (m: MachineLike | undefined) => m?.status?.conditions?.find((c) => c.type === 'PlanApplied');

// End to end: the five services as processes, a sim cluster from the CLI's template, the workload API
// reached through the kubeconfig the control plane provider wrote.
describe('a 1 control plane + 2 worker sim cluster', () => {
  let capstan: CapstanUnderTest;

  beforeAll(async () => {
    capstan = await startCapstan('sim');
  });
  afterAll(async () => {
    await capstan?.stop();
  });

  it('becomes Available, its kubeconfig lists 3 Ready nodes, and deletion tears it down in order', async () => {
    await createSimCluster(capstan, 'one', { controlPlane: 1, workers: 2 });
    const workload = await workloadClient(capstan, 'one');
    const nodes = await eventually(async () => {
      const ready = await readyNodes(workload);
      return ready.length === 3 ? ready : undefined;
    });
    const providerIDs = nodes.map((n) => n.spec?.providerID).sort();
    const machines = (await capstan.namespace.kc.makeApiClient(CustomObjectsApi).listNamespacedCustomObject({
      ...CAPI,
      namespace: capstan.namespace.name,
      plural: 'machines',
    })) as { items: { spec: { providerID?: string }; status?: { phase?: string; nodeRef?: { name: string } } }[] };
    expect(machines.items.map((m) => m.spec.providerID).sort()).toEqual(providerIDs);
    const objects = capstan.namespace.kc.makeApiClient(CustomObjectsApi);
    expect(machines.items.every((m) => m.status?.phase === 'Running' && m.status.nodeRef?.name)).toBe(true);

    // Every machine runs its node agent, which applied its first plan (PlanApplied mirrored onto the Machine).
    const listMachines = async () =>
      (
        (await objects.listNamespacedCustomObject({ ...CAPI, namespace: capstan.namespace.name, plural: 'machines' })) as {
          items: MachineLike[];
        }
      ).items;
    await eventually(async () => {
      const all = await listMachines();
      return all.length === 3 && all.every((m) => planApplied(m)?.status === 'True') ? all : undefined;
    }, { timeoutMs: 60_000, message: 'PlanApplied True on every machine' });

    // A new plan to one worker: a file, an instruction and a probe, applied and reported within seconds.
    const worker = (await listMachines()).find((m) => !('cluster.x-k8s.io/control-plane' in (m.metadata.labels ?? {})))!;
    const probeTarget = createServer((_req, res) => res.writeHead(200).end('ok'));
    await new Promise<void>((resolve) => probeTarget.listen(0, '127.0.0.1', resolve));
    try {
      const plan = JSON.stringify({
        files: [{ path: '/etc/capstan/motd', content: Buffer.from('managed by capstan\n').toString('base64'), permissions: '0644' }],
        instructions: [{ name: 'greet', command: 'sh', args: ['-c', 'cat "$CAPSTAN_HOST_ROOT/etc/capstan/motd"'], saveOutput: true }],
        probes: { web: { httpGet: { url: `http://127.0.0.1:${(probeTarget.address() as AddressInfo).port}/` } } },
      });
      const checksum = createHash('sha256').update(plan).digest('hex');
      const written = Date.now();
      await capstan.namespace.kc.makeApiClient(CoreV1Api).patchNamespacedSecret(
        {
          name: `${worker.metadata.name}-machine-plan`,
          namespace: capstan.namespace.name,
          body: { data: { plan: Buffer.from(plan).toString('base64'), 'plan-state': Buffer.from('pending').toString('base64') } },
        },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      );
      const applied = await eventually(async () => {
        const m = (await listMachines()).find((x) => x.metadata.name === worker.metadata.name);
        const c = planApplied(m);
        return c?.status === 'True' && c.message === `plan ${checksum.slice(0, 12)} applied` ? c : undefined;
      }, { timeoutMs: 30_000, message: 'the new plan applied and its probe healthy, on the Machine' });
      expect(applied.reason).toBe('PlanApplied');
      expect(Date.now() - written).toBeLessThan(30_000);

      const show = spawnSync(
        process.execPath,
        [join(repoRoot(), 'apps/cli/bin/capstan.js'), 'plan', 'show', worker.metadata.name, '-n', capstan.namespace.name, '--kubeconfig', process.env['CAPSTAN_TEST_KUBECONFIG']!],
        { encoding: 'utf8' },
      );
      expect(show.status).toBe(0);
      expect(show.stdout).toContain('State:         succeeded');
      expect(show.stdout).toContain(`Checksum:      ${checksum.slice(0, 12)} (applied)`);
      expect(show.stdout).toMatch(/web {2}healthy/);
      expect(show.stdout).toContain('  managed by capstan');
    } finally {
      await new Promise((resolve) => probeTarget.close(resolve));
    }

    // In place: a plan reconfigures and upgrades the server through the sim's install.sh; its API server restarts
    // with the next minor's kube-apiserver and the machine's new kube-apiserver-arg, and the node reports it.
    const server = (await listMachines()).find((m) => 'cluster.x-k8s.io/control-plane' in (m.metadata.labels ?? {}))!;
    const upgrade = JSON.stringify({
      files: [
        {
          path: '/etc/rancher/k3s/config.yaml.d/50-upgrade.yaml',
          content: Buffer.from('kube-apiserver-arg+:\n  - event-ttl=2h\n').toString('base64'),
          permissions: '0600',
        },
      ],
      instructions: [
        {
          name: 'install',
          command: '/opt/k3s/install.sh',
          env: ['INSTALL_K3S_VERSION=v1.35.4+k3s1', 'INSTALL_K3S_EXEC=server'],
          saveOutput: true,
        },
      ],
    });
    await capstan.namespace.kc.makeApiClient(CoreV1Api).patchNamespacedSecret(
      {
        name: `${server.metadata.name}-machine-plan`,
        namespace: capstan.namespace.name,
        body: { data: { plan: Buffer.from(upgrade).toString('base64'), 'plan-state': Buffer.from('pending').toString('base64') } },
      },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    const version = await eventually(async () => {
      const info = (await workload.makeApiClient(VersionApi).getCode().catch(() => undefined));
      return info?.gitVersion?.startsWith('v1.35.4') ? info.gitVersion : undefined;
    }, { timeoutMs: 90_000, message: 'the workload API server runs v1.35.4' });
    expect(version).toMatch(/^v1\.35\.4/);
    const record = JSON.parse(
      readFileSync(join(capstan.simStateDir, 'clusters', capstan.namespace.name, 'one', 'kube-apiserver.pid.json'), 'utf8'),
    ) as { command: string; args: string[] };
    expect(record.command).toContain('v1.35.4');
    expect(record.args).toContain('--event-ttl=2h');
    await eventually(async () => {
      const nodes = await workload.makeApiClient(CoreV1Api).listNode();
      const node = nodes.items.find((n) => n.spec?.providerID === server.spec?.providerID);
      return node?.status?.nodeInfo?.kubeletVersion === 'v1.35.4+k3s1' || undefined;
    }, { timeoutMs: 60_000, message: 'the server node reports v1.35.4+k3s1' });

    await deleteClusterAndWait(capstan, 'one');
    for (const plural of ['machines', 'machinesets', 'machinedeployments']) {
      const left = (await objects.listNamespacedCustomObject({ ...CAPI, namespace: capstan.namespace.name, plural })) as { items: unknown[] };
      expect(left.items).toEqual([]);
    }
    // The workload API server went away with its last server machine.
    await eventually(async () => (await readyNodes(workload).then(() => false, () => true)) || undefined, {
      timeoutMs: 30_000,
      message: 'workload API server stopped',
    });
  });
});
