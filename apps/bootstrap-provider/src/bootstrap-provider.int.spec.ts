import 'reflect-metadata';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { V1Secret } from '@kubernetes/client-node';
import pino from 'pino';
import { parse } from 'yaml';
import {
  K3S_INIT_SERVER_ANNOTATION,
  LABELS,
  RESOURCES,
  getCondition,
  type Cluster,
  type K3sConfig,
  type Machine,
} from '@capstan/api';
import { buildEventSubject, uniqueEventTopology } from '@capstan/events';
import { parseK3sCloudConfig } from '@capstan/k3s-bootstrap';
import {
  createKubeClient,
  formatLabelValue,
  getControllerOf,
  isNotFound,
  KubeClient,
  setControllerReference,
} from '@capstan/kube';
import { agentKubeConfig, HostRoot, loadAgentConfig, NodeAgent } from '@capstan/node-agent';
import { clusterCertificateSecrets, generateClusterCertificates } from '@capstan/pki';
import {
  defaultServiceOptions,
  startService,
  type RunningService,
  type ServiceDefinition,
} from '@capstan/provider-kit';
import {
  createTestNamespace,
  eventually,
  installCapstanDefinitions,
  testKubeConfig,
  testNatsUrl,
  type TestNamespace,
} from '@capstan/testing';
import {
  BOOTSTRAP_PROVIDER_SERVICE,
  bootstrapProviderService,
  K3SCONFIG_CONTROLLER,
} from './bootstrap-service.js';
import { SECRETS } from './k3sconfig/secrets.js';

/** Polls until `probe` yields a value (libs/testing's eventually, named by what it waits for). */
const until = <T>(
  what: string,
  probe: () => Promise<T | undefined | false> | T | undefined | false,
  timeoutMs = 30_000,
) => eventually(probe, { message: what, timeoutMs, intervalMs: 50 });

const text = (secret: V1Secret, key: string) =>
  Buffer.from(secret.data?.[key] ?? '', 'base64').toString('utf8');

describe('bootstrap-provider with a real API server and event bus', () => {
  const topology = uniqueEventTopology('boot');
  let ns: TestNamespace;
  let service: RunningService;
  let client: KubeClient;
  let cluster: Cluster;

  const clusters = () => client.resource<Cluster>(RESOURCES.Cluster);
  const machines = () => client.resource<Machine>(RESOURCES.Machine);
  const configs = () => client.resource<K3sConfig>(RESOURCES.K3sConfig);
  const secrets = () => client.resource<V1Secret>(SECRETS);
  const getSecret = async (name: string) => {
    try {
      return await secrets().get({ namespace: ns.name, name });
    } catch (error) {
      if (isNotFound(error)) return undefined;
      throw error;
    }
  };
  const getConfig = (name: string) => configs().get({ namespace: ns.name, name });
  const reasonOf = async (name: string) =>
    getCondition((await getConfig(name)).status?.conditions, 'DataSecretAvailable')?.reason;

  /** A Machine of `clusterName` and its K3sConfig, controlled by the Machine as the core leaves it. */
  async function machineWithConfig(
    name: string,
    options: {
      controlPlane?: boolean;
      initServer?: boolean;
      clusterName?: string;
      spec?: K3sConfig['spec'];
    } = {},
  ) {
    const clusterName = options.clusterName ?? cluster.metadata.name!;
    const labels = {
      [LABELS.clusterName]: clusterName,
      ...(options.controlPlane && { [LABELS.controlPlane]: '' }),
    };
    const machine = await machines().create({
      apiVersion: RESOURCES.Machine.apiVersion,
      kind: 'Machine',
      metadata: { name, namespace: ns.name, labels },
      spec: {
        clusterName,
        version: 'v1.31.4',
        bootstrap: { configRef: { apiGroup: RESOURCES.K3sConfig.group, kind: 'K3sConfig', name } },
        infrastructureRef: {
          apiGroup: 'infrastructure.generic.capstan.dev',
          kind: 'GenericInfrastructureMachine',
          name,
        },
      },
    });
    const config: K3sConfig = {
      apiVersion: RESOURCES.K3sConfig.apiVersion,
      kind: 'K3sConfig',
      metadata: {
        name,
        namespace: ns.name,
        labels,
        ...(options.initServer && { annotations: { [K3S_INIT_SERVER_ANNOTATION]: 'true' } }),
      },
      spec: options.spec ?? {},
    };
    setControllerReference(machine, config);
    return configs().create(config);
  }

  async function newCluster(name: string, spec: Cluster['spec'] = {}): Promise<Cluster> {
    return clusters().create({
      apiVersion: RESOURCES.Cluster.apiVersion,
      kind: 'Cluster',
      metadata: { name, namespace: ns.name },
      spec,
    });
  }

  const provisionInfrastructure = async (c: Cluster, port = 6443) => {
    await clusters().mergePatch(
      { namespace: ns.name, name: c.metadata.name! },
      { spec: { controlPlaneEndpoint: { host: '10.1.2.3', port } } },
    );
    await clusters().patchStatus(
      { namespace: ns.name, name: c.metadata.name! },
      { initialization: { infrastructureProvisioned: true } },
    );
  };
  const initializeControlPlane = (c: Cluster) =>
    clusters().patchStatus(
      { namespace: ns.name, name: c.metadata.name! },
      { initialization: { infrastructureProvisioned: true, controlPlaneInitialized: true } },
    );
  const createCertificates = async (clusterName: string) => {
    for (const shape of clusterCertificateSecrets(
      clusterName,
      await generateClusterCertificates(clusterName),
    )) {
      await secrets().create({
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: shape.name, namespace: ns.name, labels: shape.labels },
        type: shape.type,
        stringData: shape.stringData,
      });
    }
  };
  const publishedCount = async (name: string) => {
    const subject = buildEventSubject(
      { source: 'handoff', kind: 'K3sConfig', namespace: ns.name, name, event: 'data-secret-created' },
      topology.root,
    );
    const info = await (
      await service.context.bus.jsm()
    ).streams.info(topology.stream, { subjects_filter: subject });
    return info.state.subjects?.[subject] ?? 0;
  };

  /** Keys whose reconcile finished, in order: the service runs with its controller's reconcile observed. */
  const finished: string[] = [];
  const observed: ServiceDefinition = {
    ...bootstrapProviderService,
    setup: (context) => {
      context.controllers.onReconciled(({ key }) => finished.push(key));
      return bootstrapProviderService.setup(context);
    },
  };
  /** Reconciles `key` once more and waits until that reconcile finished. */
  const reconcileAgain = async (key: string) => {
    const before = finished.filter((k) => k === key).length;
    service.context.controllers.enqueue(K3SCONFIG_CONTROLLER, key);
    await until('a reconcile', () => finished.filter((k) => k === key).length > before);
  };

  beforeAll(async () => {
    // Agent heartbeat Leases of 3 s, so a silent agent shows within seconds (read when the service sets up).
    process.env['CAPSTAN_AGENT_LEASE_SECONDS'] = '3';
    const kc = testKubeConfig();
    await installCapstanDefinitions(kc);
    client = createKubeClient(kc);
    ns = await createTestNamespace('boot');
    service = await startService(observed, {
      ...defaultServiceOptions(BOOTSTRAP_PROVIDER_SERVICE, {}),
      kubeconfig: process.env['CAPSTAN_TEST_KUBECONFIG'],
      natsUrl: testNatsUrl(),
      httpHost: '127.0.0.1',
      httpPort: 0,
      adminPort: 0,
      namespace: ns.name,
      subjectRoot: topology.root,
      streamName: topology.stream,
      logLevel: 'silent',
      syncPeriodSeconds: 600,
    });
    cluster = await newCluster('demo', { clusterNetwork: { services: { cidrBlocks: ['10.96.0.0/12'] } } });
  });

  afterAll(async () => {
    delete process.env['CAPSTAN_AGENT_LEASE_SECONDS'];
    await service?.stop();
    await client?.close();
    await ns?.delete();
  });

  it('waits for the cluster infrastructure, then for the control plane, then renders an agent', async () => {
    await machineWithConfig('demo-md-0-a');
    await until(
      'waiting for infrastructure',
      async () => (await reasonOf('demo-md-0-a')) === 'WaitingForClusterInfrastructureReady',
    );
    expect(await getSecret('demo-md-0-a')).toBeUndefined();

    await provisionInfrastructure(cluster);
    await until(
      'waiting for the control plane',
      async () => (await reasonOf('demo-md-0-a')) === 'WaitingForControlPlaneInitialized',
    );
    const ready = getCondition((await getConfig('demo-md-0-a')).status?.conditions, 'Ready');
    expect(ready).toMatchObject({ status: 'False', reason: 'WaitingForControlPlaneInitialized' });
    expect(await getSecret('demo-md-0-a')).toBeUndefined();

    await initializeControlPlane(cluster);
    const secret = await until('the agent data secret', () => getSecret('demo-md-0-a'));
    const config = await until('the contract fields', async () => {
      const c = await getConfig('demo-md-0-a');
      return c.status?.initialization?.dataSecretCreated ? c : undefined;
    });

    expect(config.status).toMatchObject({
      dataSecretName: 'demo-md-0-a',
      observedGeneration: config.metadata.generation,
    });
    expect(getCondition(config.status?.conditions, 'Ready')).toMatchObject({
      status: 'True',
      reason: 'Ready',
    });
    expect(getCondition(config.status?.conditions, 'DataSecretAvailable')).toMatchObject({ status: 'True' });
    expect(secret.type).toBe('cluster.x-k8s.io/secret');
    expect(secret.metadata?.labels).toEqual({ [LABELS.clusterName]: 'demo' });
    expect(Object.keys(secret.data ?? {}).sort()).toEqual(['format', 'value']);
    expect(text(secret, 'format')).toBe('cloud-config');
    expect(getControllerOf(secret)).toMatchObject({
      kind: 'K3sConfig',
      name: 'demo-md-0-a',
      uid: config.metadata.uid,
    });

    const token = text((await getSecret('demo-token'))!, 'value');
    const parsed = parseK3sCloudConfig(text(secret, 'value'));
    expect(parsed).toMatchObject({
      role: 'agent',
      version: 'v1.31.4+k3s1',
      serverUrl: 'https://10.1.2.3:6443',
      token,
    });
    expect(parsed.serverTls).toEqual({});
    await until('one data-secret-created event', async () => (await publishedCount('demo-md-0-a')) === 1);
  });

  it('gives the machine a plan Secret and a node agent that can reach it alone; PlanApplied follows what the agent reports', async () => {
    await machineWithConfig('demo-md-0-plan');
    await provisionInfrastructure(cluster);
    await initializeControlPlane(cluster);
    const data = await until('the data secret', () => getSecret('demo-md-0-plan'));
    const parsed = parseK3sCloudConfig(text(data, 'value'));
    expect(parsed.startsNodeAgent).toBe(true);
    const files = new Map((parsed.nodeAgentFiles ?? []).map((f) => [f.path, f.content.toString('utf8')]));
    const agentConfig = parse(files.get('/etc/capstan/agent/config.yaml')!) as {
      secretName: string;
      namespace: string;
    };
    expect(agentConfig).toMatchObject({ secretName: 'demo-md-0-plan-machine-plan', namespace: ns.name });
    const plan = await until('the plan Secret', () => getSecret('demo-md-0-plan-machine-plan'));
    expect(plan.type).toBe('capstan.dev/machine-plan');
    expect(getControllerOf(plan)).toMatchObject({ kind: 'K3sConfig', name: 'demo-md-0-plan' });
    await until('PlanApplied waiting for the agent', async () => {
      const c = getCondition((await getConfig('demo-md-0-plan')).status?.conditions, 'PlanApplied');
      return c?.reason === 'WaitingForAgent';
    });

    // The machine's agent, with exactly what the bootstrap data gives it.
    const root = mkdtempSync(join(tmpdir(), 'capstan-boot-agent-'));
    for (const [path, content] of files) {
      mkdirSync(join(root, dirname(path)), { recursive: true });
      writeFileSync(join(root, path), content, { mode: 0o600 });
    }
    const agentRoot = new HostRoot(root);
    const loaded = loadAgentConfig(agentRoot, '/etc/capstan/agent/config.yaml');
    const agentClient = new KubeClient(agentKubeConfig(agentRoot, loaded));
    const agent = new NodeAgent({
      client: agentClient,
      namespace: loaded.namespace,
      secretName: loaded.secretName,
      root: agentRoot,
      stateDir: mkdtempSync(join(tmpdir(), 'capstan-boot-agent-state-')),
      logger: pino({ level: 'silent' }),
      probePeriodMs: 200,
    });
    agent.start();
    try {
      // Its token reads its own plan, not the bootstrap data next to it.
      await expect(
        agentClient.resource(SECRETS).get({ namespace: ns.name, name: 'demo-md-0-plan' }),
      ).rejects.toThrow(/403/);
      const applied = await until('PlanApplied True', async () => {
        const c = await getConfig('demo-md-0-plan');
        return getCondition(c.status?.conditions, 'PlanApplied')?.status === 'True' ? c : undefined;
      });
      expect(applied.status?.plan).toMatchObject({
        secretName: 'demo-md-0-plan-machine-plan',
        state: 'succeeded',
        revision: 1,
      });
      const failing = JSON.stringify({
        instructions: [{ name: 'upgrade', command: 'sh', args: ['-c', 'exit 7'] }],
      });
      await secrets().mergePatch(
        { namespace: ns.name, name: 'demo-md-0-plan-machine-plan' },
        {
          data: {
            plan: Buffer.from(failing).toString('base64'),
            'plan-state': Buffer.from('pending').toString('base64'),
          },
        },
      );
      const failed = await until('PlanApplied failed', async () => {
        const c = getCondition((await getConfig('demo-md-0-plan')).status?.conditions, 'PlanApplied');
        return c?.reason === 'PlanFailed' ? c : undefined;
      });
      expect(failed.message).toBe('plan failed: instruction upgrade exited 7');
      const subjectOf = (event: string) =>
        buildEventSubject(
          { source: 'handoff', kind: 'Machine', namespace: ns.name, name: 'demo-md-0-plan', event },
          topology.root,
        );
      const jsm = await service.context.bus.jsm();
      for (const event of ['applied', 'failed']) {
        await until(`machine-plan.${event}`, async () => {
          const info = await jsm.streams.info(topology.stream, { subjects_filter: subjectOf(event) });
          return (info.state.subjects?.[subjectOf(event)] ?? 0) === 1;
        });
      }

      // Issue 32, finding 9: the plan Secret deleted. The provider makes it again (with no plan), and the agent,
      // with the token it was bootstrapped with, goes on: the next plan written is applied.
      await secrets().delete({ namespace: ns.name, name: 'demo-md-0-plan-machine-plan' });
      const recreated = await until('plan Secret made again', () =>
        secrets()
          .get({ namespace: ns.name, name: 'demo-md-0-plan-machine-plan' })
          .catch(() => undefined),
      );
      expect(recreated.data?.['plan']).toBeUndefined();
      expect(recreated.metadata?.ownerReferences?.[0]?.kind).toBe('K3sConfig');
      const next = JSON.stringify({
        files: [{ path: '/after-recreate', content: Buffer.from('ok').toString('base64') }],
      });
      await secrets().mergePatch(
        { namespace: ns.name, name: 'demo-md-0-plan-machine-plan' },
        {
          data: {
            plan: Buffer.from(next).toString('base64'),
            'plan-state': Buffer.from('pending').toString('base64'),
          },
        },
      );
      await until('PlanApplied True after the Secret was made again', async () => {
        const c = await getConfig('demo-md-0-plan');
        return (
          getCondition(c.status?.conditions, 'PlanApplied')?.status === 'True' &&
          c.status?.plan?.state === 'succeeded'
        );
      });
      expect(readFileSync(join(root, 'after-recreate'), 'utf8')).toBe('ok');

      // Issue 32, finding 9: a silent agent turned nothing Unknown; PlanApplied said True for good. Its heartbeat
      // Lease (3 s here) goes unrenewed: AgentNotReporting; an agent reporting again brings the verdict back.
      await agent.stop();
      const silent = await until('PlanApplied Unknown: AgentNotReporting', async () => {
        const c = getCondition((await getConfig('demo-md-0-plan')).status?.conditions, 'PlanApplied');
        return c?.reason === 'AgentNotReporting' ? c : undefined;
      });
      expect(silent).toMatchObject({
        status: 'Unknown',
        message: 'node agent has not renewed its heartbeat Lease within 3s',
      });
      const again = new NodeAgent({
        client: agentClient,
        namespace: loaded.namespace,
        secretName: loaded.secretName,
        root: agentRoot,
        stateDir: `${root}-state-again`,
        logger: pino({ level: 'silent' }),
        probePeriodMs: 200,
      });
      again.start();
      try {
        await until('PlanApplied True once the agent reports again', async () => {
          const c = getCondition((await getConfig('demo-md-0-plan')).status?.conditions, 'PlanApplied');
          return c?.status === 'True';
        });
      } finally {
        await again.stop();
      }
    } finally {
      await agent.stop();
      await agentClient.close();
      rmSync(root, { recursive: true, force: true });
    }
  });

  it('renders the designated init server and a joining server from the cluster certificates, with one join token', async () => {
    const other = await newCluster('second');
    await provisionInfrastructure(other, 7443);
    await machineWithConfig('second-cp-a', { controlPlane: true, initServer: true, clusterName: 'second' });
    await machineWithConfig('second-cp-b', { controlPlane: true, clusterName: 'second' });
    await until(
      'waiting for certificates',
      async () => (await reasonOf('second-cp-a')) === 'WaitingForClusterCertificates',
    );
    // A server without the designation waits for the control plane, certificates or not.
    expect(await reasonOf('second-cp-b')).toBe('WaitingForControlPlaneInitialized');

    await createCertificates('second');
    const init = parseK3sCloudConfig(
      text(await until('the init server data', () => getSecret('second-cp-a')), 'value'),
    );
    expect(init).toMatchObject({ role: 'init-server', tlsSANs: ['10.1.2.3'] });
    expect(init.serverTls.clientCA?.certPem).toBe(text((await getSecret('second-cca'))!, 'tls.crt'));
    expect(await getSecret('second-cp-b')).toBeUndefined();

    await initializeControlPlane(other);
    const join = parseK3sCloudConfig(
      text(await until('the joining server data', () => getSecret('second-cp-b')), 'value'),
    );
    expect(join).toMatchObject({
      role: 'join-server',
      serverUrl: 'https://10.1.2.3:7443',
      token: init.token,
    });

    const tokenSecret = (await getSecret('second-token'))!;
    expect(text(tokenSecret, 'value')).toBe(init.token);
    expect(init.token).toMatch(/^[0-9a-f]{64}$/);
    expect(tokenSecret.type).toBe('cluster.x-k8s.io/secret');
    expect(tokenSecret.metadata?.labels).toEqual({ [LABELS.clusterName]: 'second' });
    expect(getControllerOf(tokenSecret)).toMatchObject({
      kind: 'Cluster',
      name: 'second',
      uid: other.metadata.uid,
    });
    // Every data secret carries the one token: it was created once.
    expect(text((await getSecret('demo-token'))!, 'value')).not.toBe(init.token);
  });

  it('gives a machine named past 63 characters its plan Secret, labelled with the name hashed as upstream hashes it', async () => {
    const name = `demo-md-0-${'x'.repeat(60)}`;
    await machineWithConfig(name);
    await provisionInfrastructure(cluster);
    await initializeControlPlane(cluster);
    await until('the data secret', () => getSecret(name));
    const plan = await until('the plan Secret', () => getSecret(`${name}-machine-plan`));
    expect(plan.metadata?.labels?.['capstan.dev/machine-name']).toBe(formatLabelValue(name));
    expect(plan.metadata?.labels?.['capstan.dev/machine-name']).toMatch(/^hash_.+_z$/);
  });

  it('publishes once and renders nothing again until the data secret is deleted', async () => {
    const before = await getSecret('demo-md-0-a');
    const first = await getConfig('demo-md-0-a');
    // A token rotated behind the provider's back would change a re-render: it must not show up.
    await secrets().mergePatch(
      { namespace: ns.name, name: 'demo-token' },
      { stringData: { value: 'rotated-token' } },
    );
    await reconcileAgain(`${ns.name}/demo-md-0-a`);
    expect((await getSecret('demo-md-0-a'))?.metadata?.resourceVersion).toBe(
      before?.metadata?.resourceVersion,
    );
    expect((await getConfig('demo-md-0-a')).metadata.resourceVersion).toBe(first.metadata.resourceVersion);
    expect(await publishedCount('demo-md-0-a')).toBe(1);

    await secrets().delete({ namespace: ns.name, name: 'demo-md-0-a' });
    const again = await until('the re-rendered data secret', async () => {
      const s = await getSecret('demo-md-0-a');
      return s && s.metadata?.uid !== before?.metadata?.uid ? s : undefined;
    });
    expect(parseK3sCloudConfig(text(again, 'value')).token).toBe('rotated-token');
    expect((await getConfig('demo-md-0-a')).status?.initialization?.dataSecretCreated).toBe(true);
  });

  it('resolves file contents from secrets, and waits while the secret is missing', async () => {
    await machineWithConfig('demo-md-0-files', {
      spec: {
        files: [
          { path: '/etc/motd', contentFrom: { secret: { name: 'motd', key: 'text' } }, permissions: '0644' },
        ],
      },
    });
    await until(
      'waiting for the file secret',
      async () => (await reasonOf('demo-md-0-files')) === 'WaitingForFileSecret',
    );
    const message = getCondition(
      (await getConfig('demo-md-0-files')).status?.conditions,
      'DataSecretAvailable',
    )?.message;
    expect(message).toBe('spec.files[0]: secret motd not found');
    await secrets().create({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'motd', namespace: ns.name },
      stringData: { text: 'welcome' },
    });
    service.context.controllers.enqueue(K3SCONFIG_CONTROLLER, `${ns.name}/demo-md-0-files`);
    const parsed = parseK3sCloudConfig(
      text(await until('the data secret', () => getSecret('demo-md-0-files')), 'value'),
    );
    expect(parsed.userFiles.map((f) => [f.path, f.permissions, f.content.toString()])).toEqual([
      ['/etc/motd', '0644', 'welcome'],
    ]);
  });

  it('renders registries.yaml with the credentials of its auth Secret, and waits, naming Secret and key, while they are missing', async () => {
    const password = 'registry-pa55-never-in-a-condition';
    const name = 'demo-md-0-registries';
    const messageOf = async () =>
      getCondition((await getConfig(name)).status?.conditions, 'DataSecretAvailable')?.message;
    await machineWithConfig(name, {
      spec: {
        privateRegistriesConfig: {
          mirrors: { 'docker.io': { endpoint: ['https://registry.example.com:5000'] } },
          configs: { 'registry.example.com:5000': { authSecret: { name: 'registry-auth' } } },
        },
      },
    });
    await until(
      'waiting for the registry secret',
      async () => (await reasonOf(name)) === 'WaitingForRegistrySecret',
    );
    expect(await messageOf()).toBe(
      'spec.privateRegistriesConfig.configs[registry.example.com:5000].authSecret: secret registry-auth not found',
    );
    await secrets().create({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'registry-auth', namespace: ns.name },
      stringData: { password },
    });
    await reconcileAgain(`${ns.name}/${name}`);
    const message = await messageOf();
    expect(message).toBe(
      'spec.privateRegistriesConfig.configs[registry.example.com:5000].authSecret: secret registry-auth has no key username',
    );
    expect(JSON.stringify((await getConfig(name)).status)).not.toContain(password);

    await secrets().mergePatch(
      { namespace: ns.name, name: 'registry-auth' },
      { stringData: { username: 'puller' } },
    );
    service.context.controllers.enqueue(K3SCONFIG_CONTROLLER, `${ns.name}/${name}`);
    const data = await until('the data secret', () => getSecret(name));
    const parsed = parseK3sCloudConfig(text(data, 'value'));
    const registries = parsed.userFiles.find((f) => f.path === '/etc/rancher/k3s/registries.yaml');
    expect(registries?.permissions).toBe('0600');
    expect(parse(registries!.content.toString('utf8'))).toEqual({
      mirrors: { 'docker.io': { endpoint: ['https://registry.example.com:5000'] } },
      configs: { 'registry.example.com:5000': { auth: { username: 'puller', password } } },
    });
    // The machine's first plan writes the same file, so that a later plan removes it with the field.
    const planSecret = await until('the plan Secret', () => getSecret(`${name}-machine-plan`));
    const plan = JSON.parse(text(planSecret, 'plan')) as { files?: { path: string; content: string }[] };
    expect(plan.files?.map((f) => f.path)).toEqual(['/etc/rancher/k3s/registries.yaml']);
    expect(Buffer.from(plan.files![0]!.content, 'base64').equals(registries!.content)).toBe(true);
    expect(JSON.stringify((await getConfig(name)).status)).not.toContain(password);
  });

  it('reports an invalid spec by field, and leaves paused clusters alone', async () => {
    await machineWithConfig('demo-md-0-bad', { spec: { agentConfig: { kubeletArgs: ['--not valid'] } } });
    await until(
      'invalid configuration',
      async () => (await reasonOf('demo-md-0-bad')) === 'InvalidConfiguration',
    );
    const message = getCondition(
      (await getConfig('demo-md-0-bad')).status?.conditions,
      'DataSecretAvailable',
    )?.message;
    expect(message).toContain('spec.agentConfig.kubeletArgs[0]');

    const paused = await newCluster('paused', { paused: true });
    await provisionInfrastructure(paused);
    await initializeControlPlane(paused);
    await machineWithConfig('paused-md-0-a', { clusterName: 'paused' });
    await until('the Paused condition', async () => {
      const c = await getConfig('paused-md-0-a');
      return getCondition(c.status?.conditions, 'Paused')?.status === 'True';
    });
    expect(await getSecret('paused-md-0-a')).toBeUndefined();
    await clusters().mergePatch({ namespace: ns.name, name: 'paused' }, { spec: { paused: false } });
    await until('the data secret after unpausing', () => getSecret('paused-md-0-a'));
  });
});
