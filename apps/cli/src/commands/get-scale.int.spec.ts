import { execFileSync } from 'node:child_process';
import { CustomObjectsApi, setHeaderOptions } from '@kubernetes/client-node';
import { PatchStrategy } from '@capstan/kube';
import { RESOURCES } from '@capstan/api';
import {
  createTestNamespace,
  installCapstanDefinitions,
  repoRoot,
  runBuiltCli as capstan,
  type TestNamespace,
} from '@capstan/testing';

const kubeconfig = () => ['--kubeconfig', process.env['CAPSTAN_TEST_KUBECONFIG']!];
const columns = (line: string | undefined) => (line ?? '').trim().split(/ {3,}/);
const merge = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
const ref = (resource: { group: string; kind: string }, name: string) => ({ apiGroup: resource.group, kind: resource.kind, name });

describe('capstan get clusters / get machines / scale / generate / get kubeconfig (the built CLI)', () => {
  let a: TestNamespace;
  let b: TestNamespace;
  let api: CustomObjectsApi;

  const create = async (resource: (typeof RESOURCES)[keyof typeof RESOURCES], namespace: string, body: Record<string, unknown>, status?: unknown) => {
    const { group, version, plural } = resource;
    const created = (await api.createNamespacedCustomObject({
      group,
      version,
      namespace,
      plural,
      body: { apiVersion: resource.apiVersion, kind: resource.kind, ...body },
    })) as { metadata: { name: string } };
    if (status) {
      const name = created.metadata.name;
      await api.patchNamespacedCustomObjectStatus({ group, version, namespace, plural, name, body: { status } }, merge);
    }
  };
  const read = async (resource: (typeof RESOURCES)[keyof typeof RESOURCES], namespace: string, name: string) =>
    (await api.getNamespacedCustomObject({ ...resource, namespace, name })) as { spec: { replicas?: number } };

  beforeAll(async () => {
    // The CLI under test is the built one: compile what changed since the last build (incremental, seconds).
    execFileSync(process.execPath, ['scripts/build.mjs', 'cli'], { cwd: repoRoot(), stdio: 'ignore' });
    [a, b] = await Promise.all([createTestNamespace('cli-get'), createTestNamespace('cli-get')]);
    api = a.kc.makeApiClient(CustomObjectsApi);
    await installCapstanDefinitions(a.kc);
    const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
    const condition = (type: string, status = 'True') => ({ type, status, reason: type, message: '', lastTransitionTime: now });
    const labels = { 'cluster.x-k8s.io/cluster-name': 'alpha' };

    await create(
      RESOURCES.Cluster,
      a.name,
      {
        metadata: { name: 'alpha' },
        spec: {
          controlPlaneRef: ref(RESOURCES.K3sControlPlane, 'alpha-control-plane'),
          infrastructureRef: ref(RESOURCES.SimCluster, 'alpha'),
          controlPlaneEndpoint: { host: '127.0.0.1', port: 6443 },
        },
      },
      { phase: 'Provisioned', conditions: [condition('Available')] },
    );
    await create(
      RESOURCES.K3sControlPlane,
      a.name,
      {
        metadata: { name: 'alpha-control-plane', labels },
        spec: {
          replicas: 3,
          version: 'v1.34.4',
          machineTemplate: { spec: { infrastructureRef: ref(RESOURCES.SimMachineTemplate, 'alpha-control-plane') } },
        },
      },
      { replicas: 3, readyReplicas: 2 },
    );
    const machineSpec = {
      clusterName: 'alpha',
      version: 'v1.34.4',
      bootstrap: { configRef: ref(RESOURCES.K3sConfigTemplate, 'alpha-md-0') },
      infrastructureRef: ref(RESOURCES.SimMachineTemplate, 'alpha-md-0'),
    };
    const mdLabels = { ...labels, 'cluster.x-k8s.io/deployment-name': 'alpha-md-0' };
    await create(
      RESOURCES.MachineDeployment,
      a.name,
      {
        metadata: { name: 'alpha-md-0', labels },
        spec: { clusterName: 'alpha', replicas: 2, selector: { matchLabels: mdLabels }, template: { metadata: { labels: mdLabels }, spec: machineSpec } },
      },
      { replicas: 2, readyReplicas: 1 },
    );
    await create(
      RESOURCES.Machine,
      a.name,
      {
        metadata: { name: 'alpha-md-0-x7k2p', labels: mdLabels },
        spec: {
          ...machineSpec,
          bootstrap: { dataSecretName: 'alpha-md-0-x7k2p' },
          infrastructureRef: ref(RESOURCES.SimMachine, 'alpha-md-0-x7k2p'),
          providerID: 'sim://alpha/alpha-md-0-x7k2p',
        },
      },
      {
        phase: 'Running',
        nodeRef: { name: 'alpha-md-0-x7k2p' },
        conditions: [condition('Ready'), condition('UpToDate'), condition('PlanApplied', 'False')],
      },
    );
    await create(RESOURCES.Machine, a.name, {
      metadata: { name: 'alpha-md-0-pending', labels: mdLabels },
      spec: { ...machineSpec, bootstrap: { dataSecretName: 'x' }, infrastructureRef: ref(RESOURCES.SimMachine, 'alpha-md-0-pending') },
    });
    await create(RESOURCES.Cluster, b.name, {
      metadata: { name: 'beta' },
      spec: { infrastructureRef: ref(RESOURCES.SimCluster, 'beta') },
    });
  });
  afterAll(async () => {
    await Promise.all([a?.delete(), b?.delete()]);
  });

  describe('get clusters', () => {
    it('lists the clusters of every namespace by default, and of one with -n, as a v1 List with -o json', async () => {
      const all = await capstan('get', 'clusters', '-o', 'json', ...kubeconfig());
      expect(all.status).toBe(0);
      const list = JSON.parse(all.stdout) as { kind: string; items: { metadata: { namespace: string; name: string; managedFields?: unknown } }[] };
      expect(list.kind).toBe('List');
      const ours = list.items.filter((c) => [a.name, b.name].includes(c.metadata.namespace));
      expect(ours.map((c) => `${c.metadata.namespace}/${c.metadata.name}`).sort()).toEqual([`${a.name}/alpha`, `${b.name}/beta`].sort());
      expect(ours[0]!.metadata.managedFields).toBeUndefined();

      const one = await capstan('get', 'clusters', '-n', b.name, '-o', 'yaml', ...kubeconfig());
      expect(one.status).toBe(0);
      expect(one.stdout).toMatch(/^apiVersion: v1\nkind: List\n/);
      expect(one.stdout).toContain('name: beta');
      expect(one.stdout).not.toContain('name: alpha');
    });

    it('prints phase, control plane version and ready/desired machines as a table, more with -o wide', async () => {
      const table = await capstan('get', 'clusters', '-n', a.name, ...kubeconfig());
      expect(table.status).toBe(0);
      const lines = table.stdout.trimEnd().split('\n');
      expect(columns(lines[0])).toEqual(['NAMESPACE', 'NAME', 'PHASE', 'VERSION', 'CONTROL PLANE', 'WORKERS', 'AGE']);
      expect(columns(lines[1]).slice(0, 6)).toEqual([a.name, 'alpha', 'Provisioned', 'v1.34.4', '2/3', '1/2']);
      expect(lines).toHaveLength(2);

      const wide = await capstan('get', 'clusters', '-o', 'wide', ...kubeconfig());
      const alpha = wide.stdout.split('\n').find((l) => l.startsWith(`${a.name} `));
      expect(columns(alpha).slice(-3)).toEqual(['127.0.0.1:6443', 'SimCluster/alpha', 'True']);
      const beta = wide.stdout.split('\n').find((l) => l.startsWith(`${b.name} `));
      expect(columns(beta).slice(1, 6)).toEqual(['beta', '<none>', '<none>', '<none>', '0/0']);
    });

    it('says so on stderr when a namespace has no clusters', async () => {
      const empty = await capstan('get', 'clusters', '-n', `${a.name}-empty`, ...kubeconfig());
      expect(empty).toMatchObject({ status: 0, stdout: '' });
      expect(empty.stderr).toBe(`No clusters found in namespace ${a.name}-empty.\n`);
    });
  });

  describe('get machines', () => {
    it("lists a cluster's machines with node, provider ID, phase and version; PLAN APPLIED with -o wide", async () => {
      const table = await capstan('get', 'machines', '-c', 'alpha', '-n', a.name, ...kubeconfig());
      expect(table.status).toBe(0);
      const lines = table.stdout.trimEnd().split('\n');
      expect(columns(lines[0])).toEqual(['NAME', 'CLUSTER', 'NODE', 'PROVIDER ID', 'PHASE', 'VERSION', 'AGE']);
      expect(columns(lines[1]).slice(0, 6)).toEqual(['alpha-md-0-pending', 'alpha', '<none>', '<none>', '<none>', 'v1.34.4']);
      expect(columns(lines[2]).slice(0, 6)).toEqual(['alpha-md-0-x7k2p', 'alpha', 'alpha-md-0-x7k2p', 'sim://alpha/alpha-md-0-x7k2p', 'Running', 'v1.34.4']);

      const wide = await capstan('get', 'machines', '-n', a.name, '-o', 'wide', ...kubeconfig());
      const wideLines = wide.stdout.trimEnd().split('\n');
      expect(columns(wideLines[0]).slice(-3)).toEqual(['UP TO DATE', 'READY', 'PLAN APPLIED']);
      expect(columns(wideLines[2]).slice(-3)).toEqual(['True', 'True', 'False']);
    });

    it('takes -A (a NAMESPACE column), -o json, and reports no machines for another cluster', async () => {
      const all = await capstan('get', 'machines', '-A', ...kubeconfig());
      expect(all.stdout.split('\n')[0]).toMatch(/^NAMESPACE +NAME +CLUSTER +NODE /);
      expect(all.stdout).toMatch(new RegExp(`^${a.name} +alpha-md-0-x7k2p `, 'm'));

      const json = await capstan('get', 'machines', '-n', a.name, '-o', 'json', ...kubeconfig());
      const names = (JSON.parse(json.stdout) as { items: { metadata: { name: string } }[] }).items.map((m) => m.metadata.name);
      expect(names.sort()).toEqual(['alpha-md-0-pending', 'alpha-md-0-x7k2p']);

      const none = await capstan('get', 'machines', '-c', 'beta', '-n', a.name, ...kubeconfig());
      expect(none).toMatchObject({ status: 0, stdout: '', stderr: `No machines of cluster beta found in namespace ${a.name}.\n` });
    });
  });

  describe('scale', () => {
    it('scales a pool by its short or full name through the scale subresource', async () => {
      const short = await capstan('scale', 'alpha', '--pool', 'md-0', '--replicas', '4', '-n', a.name, ...kubeconfig());
      expect(short.stderr).toBe('');
      expect(short).toMatchObject({ status: 0, stdout: `MachineDeployment ${a.name}/alpha-md-0 scaled from 2 to 4 replicas\n` });
      expect((await read(RESOURCES.MachineDeployment, a.name, 'alpha-md-0')).spec.replicas).toBe(4);

      const full = await capstan('scale', 'alpha', '--pool', 'alpha-md-0', '--replicas', '0', '-n', a.name, ...kubeconfig());
      expect(full.status).toBe(0);
      expect((await read(RESOURCES.MachineDeployment, a.name, 'alpha-md-0')).spec.replicas).toBe(0);
    });

    it('scales the control plane to an odd count and refuses an even one with the etcd rule', async () => {
      const odd = await capstan('scale', 'alpha', '--control-plane', '--replicas', '5', '-n', a.name, ...kubeconfig());
      expect(odd).toMatchObject({ status: 0, stdout: `K3sControlPlane ${a.name}/alpha-control-plane scaled from 3 to 5 replicas\n` });
      expect((await read(RESOURCES.K3sControlPlane, a.name, 'alpha-control-plane')).spec.replicas).toBe(5);

      const even = await capstan('scale', 'alpha', '--control-plane', '--replicas', '4', '-n', a.name, ...kubeconfig());
      expect(even).toMatchObject({ status: 1, stdout: '' });
      expect(even.stderr).toMatch(/needs an odd number of machines \(1, 3, 5, \.\.\.\) for quorum/);
      expect((await read(RESOURCES.K3sControlPlane, a.name, 'alpha-control-plane')).spec.replicas).toBe(5);
    });

    it('refuses an unknown pool naming the real ones, a missing cluster, a negative count and a missing target', async () => {
      const pool = await capstan('scale', 'alpha', '--pool', 'gpu', '--replicas', '1', '-n', a.name, ...kubeconfig());
      expect(pool.status).toBe(1);
      expect(pool.stderr).toContain('has no MachineDeployment "gpu" or "alpha-gpu"; its pools: alpha-md-0 (md-0)');
      const missing = await capstan('scale', 'nope', '--pool', 'md-0', '--replicas', '1', '-n', a.name, ...kubeconfig());
      expect(missing.stderr).toContain(`Cluster ${a.name}/nope not found`);
      const negative = await capstan('scale', 'alpha', '--pool', 'md-0', '--replicas', '-1', '-n', a.name, ...kubeconfig());
      expect(negative.status).toBe(1);
      expect(negative.stderr).toContain('--replicas must be a whole number of machines, 0 or more; got "-1"');
      const neither = await capstan('scale', 'alpha', '--replicas', '1', '-n', a.name, ...kubeconfig());
      expect(neither.status).toBe(1);
      expect(neither.stderr).toContain('give one of --pool <name>');
    });
  });

  describe('generate cluster', () => {
    it.each([
      [['My_Cluster'], /cluster name "My_Cluster" is not an RFC 1123 label/],
      [['x'.repeat(64)], /at most 63 characters.*\(it has 64 characters\)/],
      [['demo', '--kubernetes-version', 'banana'], /"banana" is not a Kubernetes version: a semantic version vX\.Y\.Z, optionally with a K3s release \+k3sN/],
      [['demo', '--control-plane-machine-count', '2'], /is 2, but a K3s control plane runs embedded etcd and needs an odd number of machines/],
      [['demo', '--worker-machine-count', '-1'], /--worker-machine-count must be a whole number of machines, 0 or more; got "-1"/],
      [['demo', '-n', 'Not_A_Namespace'], /namespace \(--target-namespace, NAMESPACE\) "Not_A_Namespace" is not an RFC 1123 label/],
    ])('refuses %j with the rule, nothing on stdout and no stack trace', async (args, message) => {
      const run = await capstan('generate', 'cluster', ...args, ...(args.includes('--kubernetes-version') ? [] : ['--kubernetes-version', 'v1.34.4']));
      expect(run.status).toBe(1);
      expect(run.stdout).toBe('');
      expect(run.stderr).toMatch(message);
      expect(run.stderr).not.toMatch(/^\s+at /m);
    });

    it('still prints a valid cluster', async () => {
      const run = await capstan('generate', 'cluster', 'demo', '--kubernetes-version', 'v1.34.4+k3s1', '--control-plane-machine-count', '3');
      expect(run.status).toBe(0);
      expect(run.stdout).toContain('kind: K3sControlPlane');
    });
  });

  describe('get kubeconfig', () => {
    it('says the Cluster does not exist rather than blaming its control plane', async () => {
      const run = await capstan('get', 'kubeconfig', 'does-not-exist', '-n', a.name, ...kubeconfig());
      expect(run).toMatchObject({ status: 1, stdout: '' });
      expect(run.stderr).toContain(`Cluster ${a.name}/does-not-exist not found`);
      expect(run.stderr).not.toContain('control plane');
    });

    it('blames the control plane when the Cluster exists without its kubeconfig Secret', async () => {
      const run = await capstan('get', 'kubeconfig', 'alpha', '-n', a.name, ...kubeconfig());
      expect(run.status).toBe(1);
      expect(run.stderr).toContain(`Secret ${a.name}/alpha-kubeconfig not found: cluster alpha has no kubeconfig yet (is its control plane initialized?)`);
    });
  });
});
