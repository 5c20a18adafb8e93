// `capstan upgrade cluster` against the real API server with no controllers running: the test plays the
// controllers' part by writing the status a rollout would end with, and checks the order of the patches.
import { execFileSync } from 'node:child_process';
import { CustomObjectsApi, setHeaderOptions } from '@kubernetes/client-node';
import { PatchStrategy } from '@capstan/kube';
import { LABELS, RESOURCES } from '@capstan/api';
import {
  createTestNamespace,
  installCapstanDefinitions,
  repoRoot,
  runBuiltCli as capstan,
  type TestNamespace,
} from '@capstan/testing';

type Resource = (typeof RESOURCES)[keyof typeof RESOURCES];

const merge = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
const ref = (resource: { group: string; kind: string }, name: string) => ({
  apiGroup: resource.group,
  kind: resource.kind,
  name,
});
const now = () => new Date().toISOString().replace(/\.\d+Z$/, 'Z');
const updating = (status: 'True' | 'False') => ({
  type: 'Updating',
  status,
  reason: status === 'True' ? 'InPlaceUpdating' : 'NotUpdating',
  message: '',
  lastTransitionTime: now(),
});

describe('capstan upgrade cluster (the built CLI)', () => {
  let ns: TestNamespace;
  let api: CustomObjectsApi;
  const upgrade = (...args: string[]) =>
    capstan(
      'upgrade',
      'cluster',
      'alpha',
      '-n',
      ns.name,
      '--kubeconfig',
      process.env['CAPSTAN_TEST_KUBECONFIG']!,
      ...args,
    );

  const create = async (resource: Resource, body: Record<string, unknown>) => {
    const { group, version, plural } = resource;
    await api.createNamespacedCustomObject({
      group,
      version,
      namespace: ns.name,
      plural,
      body: { apiVersion: resource.apiVersion, kind: resource.kind, ...body },
    });
  };
  const read = async (resource: Resource, name: string) =>
    (await api.getNamespacedCustomObject({ ...resource, namespace: ns.name, name })) as {
      metadata: { generation: number };
      spec: { version?: string; template?: { spec: { version?: string } } };
    };
  /** Writes status through the status subresource, as a controller does. */
  const writeStatus = async (resource: Resource, name: string, status: Record<string, unknown>) => {
    const { group, version, plural } = resource;
    await api.patchNamespacedCustomObjectStatus(
      { group, version, namespace: ns.name, plural, name, body: { status } },
      merge,
    );
  };
  const controlPlaneVersion = async () =>
    (await read(RESOURCES.K3sControlPlane, 'alpha-control-plane')).spec.version;
  const workerVersion = async () =>
    (await read(RESOURCES.MachineDeployment, 'alpha-md-0')).spec.template?.spec.version;
  /** The status the K3s control plane would write once its one machine runs `version`. */
  const controlPlaneUpToDate = async (version: string) =>
    writeStatus(RESOURCES.K3sControlPlane, 'alpha-control-plane', {
      replicas: 1,
      upToDateReplicas: 1,
      version,
      observedGeneration: (await read(RESOURCES.K3sControlPlane, 'alpha-control-plane')).metadata.generation,
    });

  beforeAll(async () => {
    // The CLI under test is the built one: compile what changed since the last build (incremental, seconds).
    execFileSync(process.execPath, ['scripts/build.mjs', 'cli'], { cwd: repoRoot(), stdio: 'ignore' });
    ns = await createTestNamespace('cli-upgrade');
    api = ns.kc.makeApiClient(CustomObjectsApi);
    await installCapstanDefinitions(ns.kc);
    const clusterLabel = { [LABELS.clusterName]: 'alpha' };

    await create(RESOURCES.Cluster, {
      metadata: { name: 'alpha' },
      spec: {
        controlPlaneRef: ref(RESOURCES.K3sControlPlane, 'alpha-control-plane'),
        infrastructureRef: ref(RESOURCES.SimCluster, 'alpha'),
      },
    });
    await create(RESOURCES.Cluster, {
      metadata: { name: 'workers-only' },
      spec: { infrastructureRef: ref(RESOURCES.SimCluster, 'workers-only') },
    });
    await create(RESOURCES.K3sControlPlane, {
      metadata: { name: 'alpha-control-plane', labels: clusterLabel },
      spec: {
        replicas: 1,
        version: 'v1.34.4',
        machineTemplate: {
          spec: { infrastructureRef: ref(RESOURCES.SimMachineTemplate, 'alpha-control-plane') },
        },
      },
    });
    const mdLabels = { ...clusterLabel, [LABELS.deploymentName]: 'alpha-md-0' };
    await create(RESOURCES.MachineDeployment, {
      metadata: { name: 'alpha-md-0', labels: clusterLabel },
      spec: {
        clusterName: 'alpha',
        replicas: 2,
        selector: { matchLabels: mdLabels },
        template: {
          metadata: { labels: mdLabels },
          spec: {
            clusterName: 'alpha',
            version: 'v1.34.4',
            bootstrap: { configRef: ref(RESOURCES.K3sConfigTemplate, 'alpha-md-0') },
            infrastructureRef: ref(RESOURCES.SimMachineTemplate, 'alpha-md-0'),
          },
        },
      },
    });
    // A control plane machine, labelled as the K3s control plane labels its machines.
    await create(RESOURCES.Machine, {
      metadata: {
        name: 'alpha-control-plane-x7k2p',
        labels: {
          ...clusterLabel,
          [LABELS.controlPlane]: '',
          [LABELS.controlPlaneName]: 'alpha-control-plane',
        },
      },
      spec: {
        clusterName: 'alpha',
        version: 'v1.35.4',
        bootstrap: { dataSecretName: 'alpha-control-plane-x7k2p' },
        infrastructureRef: ref(RESOURCES.SimMachine, 'alpha-control-plane-x7k2p'),
      },
    });
  });
  afterAll(async () => {
    await ns?.delete();
  });

  it('refuses a downgrade, a skipped minor and a malformed version before patching anything', async () => {
    const downgrade = await upgrade('--kubernetes-version', 'v1.34.0');
    expect(downgrade).toMatchObject({ status: 1, stdout: '' });
    expect(downgrade.stderr).toBe(
      `Error: --kubernetes-version v1.34.0 is older than the version of K3sControlPlane ${ns.name}/alpha-control-plane, v1.34.4: a cluster cannot be downgraded\n`,
    );
    const skip = await upgrade('--kubernetes-version', 'v1.36.1');
    expect(skip.status).toBe(1);
    expect(skip.stderr).toContain('skips a minor version: K3sControlPlane');
    expect(skip.stderr).toContain('K3s upgrades one minor at a time; upgrade to v1.35.x first');
    const malformed = await upgrade('--kubernetes-version', '1.35');
    expect(malformed.status).toBe(1);
    expect(malformed.stderr).toMatch(/"1\.35" is not a Kubernetes version/);
    expect(await controlPlaneVersion()).toBe('v1.34.4');
  });

  it('says which cluster is missing, and that a cluster without a control plane has nothing to upgrade', async () => {
    const missing = await capstan(
      'upgrade',
      'cluster',
      'nope',
      '--kubernetes-version',
      'v1.35.4',
      '-n',
      ns.name,
      '--kubeconfig',
      process.env['CAPSTAN_TEST_KUBECONFIG']!,
    );
    expect(missing).toMatchObject({
      status: 1,
      stdout: '',
      stderr: `Error: Cluster ${ns.name}/nope not found\n`,
    });
    const workersOnly = await capstan(
      'upgrade',
      'cluster',
      'workers-only',
      '--kubernetes-version',
      'v1.35.4',
      '-n',
      ns.name,
      '--kubeconfig',
      process.env['CAPSTAN_TEST_KUBECONFIG']!,
    );
    expect(workersOnly).toMatchObject({
      status: 1,
      stderr: `Error: Cluster ${ns.name}/workers-only has no control plane (spec.controlPlaneRef)\n`,
    });
  });

  it('upgrades the control plane first and tells how to upgrade the MachineDeployments after it', async () => {
    const run = await upgrade('--kubernetes-version', 'v1.35.4');
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    expect(run.stdout).toBe(
      `K3sControlPlane ${ns.name}/alpha-control-plane upgrading from v1.34.4 to v1.35.4\n` +
        `MachineDeployment ${ns.name}/alpha-md-0 is upgraded after the control plane (now updated 0/1 (version unknown)); once it is up to date, run:\n` +
        `  capstan upgrade cluster alpha --kubernetes-version v1.35.4 -n ${ns.name} --kubeconfig ${process.env['CAPSTAN_TEST_KUBECONFIG']}\n`,
    );
    expect(await controlPlaneVersion()).toBe('v1.35.4');
    expect(await workerVersion()).toBe('v1.34.4');
  });

  it('with --wait, follows the control plane, shows the machines updating in place and times out with what is left', async () => {
    await controlPlaneUpToDate('v1.35.4');
    await writeStatus(RESOURCES.Machine, 'alpha-control-plane-x7k2p', { conditions: [updating('True')] });
    const run = await upgrade('--kubernetes-version', 'v1.35.4', '--wait', '--timeout', '3s');
    expect(run.status).toBe(1);
    expect(run.stdout).toBe(`K3sControlPlane ${ns.name}/alpha-control-plane is already at v1.35.4\n`);
    expect(run.stderr).toContain(
      `Error: timed out after 3s waiting for the upgrade to v1.35.4: K3sControlPlane ${ns.name}/alpha-control-plane: ` +
        'updated 1/1 (version v1.35.4); updating: alpha-control-plane-x7k2p; the MachineDeployments are not upgraded yet',
    );
    expect(await workerVersion()).toBe('v1.34.4');
  });

  it('upgrades the MachineDeployments once the control plane is up to date', async () => {
    await writeStatus(RESOURCES.Machine, 'alpha-control-plane-x7k2p', { conditions: [updating('False')] });
    const run = await upgrade('--kubernetes-version', 'v1.35.4');
    expect(run).toMatchObject({
      status: 0,
      stderr: '',
      stdout:
        `K3sControlPlane ${ns.name}/alpha-control-plane is already at v1.35.4\n` +
        `MachineDeployment ${ns.name}/alpha-md-0 upgrading from v1.34.4 to v1.35.4\n`,
    });
    expect(await workerVersion()).toBe('v1.35.4');
    expect(await controlPlaneVersion()).toBe('v1.35.4');
  });

  it('with --wait, follows the MachineDeployments until their machines are up to date', async () => {
    const pending = await upgrade('--kubernetes-version', 'v1.35.4', '--wait', '--timeout', '3s');
    expect(pending.status).toBe(1);
    expect(pending.stderr).toContain(
      `Error: timed out after 3s waiting for the upgrade to v1.35.4: MachineDeployment ${ns.name}/alpha-md-0: updated 0/2 (0 machines)`,
    );

    const generation = (await read(RESOURCES.MachineDeployment, 'alpha-md-0')).metadata.generation;
    await writeStatus(RESOURCES.MachineDeployment, 'alpha-md-0', {
      replicas: 2,
      upToDateReplicas: 2,
      observedGeneration: generation,
    });
    const done = await upgrade('--kubernetes-version', 'v1.35.4', '--wait', '--timeout', '10s');
    expect(done.stderr).not.toContain('Error');
    expect(done.status).toBe(0);
    expect(done.stdout).toBe(
      `K3sControlPlane ${ns.name}/alpha-control-plane is already at v1.35.4\n` +
        `MachineDeployment ${ns.name}/alpha-md-0 is already at v1.35.4\n` +
        `Cluster ${ns.name}/alpha upgraded to v1.35.4\n`,
    );
    // Not a terminal: one line per state, each finished with a mark.
    expect(done.stderr).toContain(
      `✓ K3sControlPlane ${ns.name}/alpha-control-plane: updated 1/1 (version v1.35.4)\n`,
    );
    expect(done.stderr).toContain(`✓ MachineDeployment ${ns.name}/alpha-md-0: updated 2/2 (2 machines)\n`);
  });
});
