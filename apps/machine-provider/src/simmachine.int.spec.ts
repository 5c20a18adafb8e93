import { randomBytes } from 'node:crypto';
import { existsSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { parse, stringify } from 'yaml';
import { ConditionReason, FINALIZERS, RESOURCES, type SimMachine } from '@capstan/api';
import { uniqueEventTopology } from '@capstan/events';
import { createKubeClient, type KubeClient } from '@capstan/kube';
import type { RunningService } from '@capstan/provider-kit';
import {
  lastPublishedEvent,
  SimConditionReason,
  SimConditionType,
  type SimMachineOptions,
} from '@capstan/sim';
import {
  createTestNamespace,
  installCapstanDefinitions,
  testKubeConfig,
  type TestNamespace,
  eventually,
} from '@capstan/testing';
import { SimClusterFixture } from './testing/sim-fixture.js';
import { startMachineProvider, testSimOptions } from './testing/start-machine-provider.js';

// SimMachines with hand-made Machines and bootstrap data (rendered with renderK3sCloudConfig from
// generateClusterCertificates): a server and two agents come up as real Nodes of a real workload API server.

describe('machine-provider: SimMachine', () => {
  let ns: TestNamespace;
  let service: RunningService;
  let client: KubeClient;
  let alpha: SimClusterFixture;
  let options: SimMachineOptions;
  const topology = uniqueEventTopology('simma');

  beforeAll(async () => {
    await installCapstanDefinitions(testKubeConfig());
    ns = await createTestNamespace('simma');
    client = createKubeClient(testKubeConfig());
    options = testSimOptions();
    service = await startMachineProvider(ns.name, topology, options);
    alpha = await SimClusterFixture.create(client, ns.name, 'alpha');
  });

  afterAll(async () => {
    await alpha?.deleteMachines();
    await service?.stop();
    await client?.close();
    await ns?.delete();
    if (options) rmSync(options.stateDir, { recursive: true, force: true });
  });

  const published = (name: string, event: string) =>
    eventually(
      () =>
        lastPublishedEvent(service.context.bus, topology, {
          kind: 'SimMachine',
          namespace: ns.name,
          name,
          event,
        }),
      { timeoutMs: 30_000, message: `${event} event of ${name}` },
    );

  it('boots a server and two agents whose Nodes are Ready in the workload API', async () => {
    await alpha.machine('alpha-cp-0', { role: 'init-server', failureDomain: 'fd-1' });
    await alpha.machine('alpha-md-0', {
      role: 'agent',
      agentConfig: { nodeLabels: ['pool=md-0'], nodeTaints: ['pool=md-0:PreferNoSchedule'] },
    });
    await alpha.machine('alpha-md-1', { role: 'agent' });

    await eventually(async () => (await alpha.readyNodes()).length === 3, {
      timeoutMs: 90_000,
      message: 'three Ready nodes',
    });
    expect(await alpha.readyNodes()).toEqual(['alpha-cp-0', 'alpha-md-0', 'alpha-md-1']);

    // The Node can be Ready before the reconcile that booted the machine has written it (the kit writes at its end).
    const server = await eventually(
      async () => {
        const machine = await alpha.simMachine('alpha-cp-0');
        return machine.status?.initialization?.provisioned === true && machine;
      },
      { timeoutMs: 30_000, message: 'alpha-cp-0 written as provisioned' },
    );
    expect(server.spec?.providerID).toBe(`sim://${ns.name}/alpha-cp-0`);
    expect(server.metadata?.finalizers).toContain(FINALIZERS.simMachine);
    expect(server.status?.initialization?.provisioned).toBe(true);
    expect(server.status?.failureDomain).toBe('fd-1');
    expect(server.status?.addresses).toEqual([
      { type: 'InternalIP', address: expect.stringMatching(/^127\.\d+\.\d+\.\d+$/) },
      { type: 'Hostname', address: 'alpha-cp-0' },
    ]);
    const conditions = Object.fromEntries((server.status?.conditions ?? []).map((c) => [c.type, c]));
    expect(conditions['Ready']).toMatchObject({ status: 'True', reason: ConditionReason.Provisioned });
    expect(conditions[SimConditionType.BootstrapExecSucceeded]).toMatchObject({ status: 'True' });
    expect(conditions[SimConditionType.APIServerHealthy]).toMatchObject({ status: 'True' });
    await alpha.condition('alpha-md-0', SimConditionType.NodeRunning, SimConditionReason.NodeRegistered);

    const core = await alpha.workloadCore();
    // Its own taints only, once the not-ready taint of registration is gone (the node and the cluster's node lifecycle
    // controller both take it off when the node reports Ready).
    const worker = await eventually(
      async () => {
        const node = await core.readNode({ name: 'alpha-md-0' });
        return node.spec?.taints?.every((t) => t.key === 'pool') === true && node;
      },
      { timeoutMs: 30_000, message: 'alpha-md-0 with only its own taints' },
    );
    expect(worker.spec?.providerID).toBe(`sim://${ns.name}/alpha-md-0`);
    expect(worker.metadata?.labels?.['pool']).toBe('md-0');
    expect(worker.spec?.taints).toEqual([{ key: 'pool', value: 'md-0', effect: 'PreferNoSchedule' }]);
    const cp = await core.readNode({ name: 'alpha-cp-0' });
    expect(cp.metadata?.labels?.['node-role.kubernetes.io/control-plane']).toBe('true');

    const event = await published('alpha-md-0', 'provisioned');
    expect(event.type).toBe('dev.capstan.handoff.infrastructure-machine.provisioned');
    expect(event.data).toMatchObject({
      clusterName: 'alpha',
      machineName: 'alpha-md-0',
      providerID: `sim://${ns.name}/alpha-md-0`,
    });
  });

  it('waits for bootstrap data, then boots after its provisioning delay', async () => {
    await alpha.machine('alpha-late', {
      role: 'agent',
      withoutData: true,
      spec: { provisioningDelaySeconds: 2 },
    });
    await alpha.condition('alpha-late', 'Ready', ConditionReason.WaitingForBootstrapData);
    await alpha.provideBootstrapData('alpha-late');
    await alpha.condition('alpha-late', 'Ready', SimConditionReason.Booting, 10_000);
    await alpha.condition('alpha-late', 'Ready', ConditionReason.Provisioned, 30_000);
    await eventually(async () => (await alpha.readyNodes()).includes('alpha-late'), {
      timeoutMs: 30_000,
      message: 'alpha-late Ready',
    });
  });

  it('fails machines whose bootstrap data it cannot read, naming what, and injected provisioning failures', async () => {
    const broken = alpha.render('agent').replace(/token: \S+/, 'token: [unclosed');
    await alpha.machine('alpha-broken', { role: 'agent', data: broken });
    const invalid = await alpha.condition('alpha-broken', 'Ready', SimConditionReason.BootstrapDataInvalid);
    expect(invalid.message).toContain('/etc/rancher/k3s/config.yaml');
    expect(invalid.message).not.toContain(alpha.token);
    expect((await published('alpha-broken', 'failed')).data).toMatchObject({
      reason: 'BootstrapDataInvalid',
    });

    const agentData = alpha.render('agent');
    await alpha.machine('alpha-notk3s', {
      role: 'agent',
      data: agentData.replace('#cloud-config', '#!/bin/sh'),
    });
    expect(
      (await alpha.condition('alpha-notk3s', 'Ready', SimConditionReason.BootstrapDataInvalid)).message,
    ).toContain('header');

    await alpha.machine('alpha-doomed', {
      role: 'agent',
      spec: { failProvisioning: 'the rack caught fire' },
    });
    const failed = await alpha.condition('alpha-doomed', 'Ready', SimConditionReason.ProvisioningFailed);
    expect(failed.message).toBe('the rack caught fire');
    expect((await published('alpha-doomed', 'failed')).data).toMatchObject({
      reason: 'ProvisioningFailed',
      message: 'the rack caught fire',
    });
    expect((await alpha.simMachine('alpha-doomed')).status?.initialization?.provisioned).toBeUndefined();
  });

  it('refuses bootstrap data its owner wrote (not rendered) that climbs out of the machine or inflates past the limit', async () => {
    // `spec.bootstrap.dataSecretName` names a Secret the cluster owner wrote: none of the bootstrap provider's rules
    // ran on it, so the sim's own checks are all that stand between it and the management host. (Its
    // kube-apiserver-arg reach an API server only through a later install, where machine-root.spec.ts covers them.)
    const escapee = join(tmpdir(), `capstan-owner-data-escape-${randomBytes(4).toString('hex')}`);
    const withFile = (data: string, file: Record<string, unknown>) => {
      const document = parse(data) as { write_files: Record<string, unknown>[] };
      document.write_files.push(file);
      return `#cloud-config\n${stringify(document)}`;
    };
    await alpha.machine('alpha-climber', {
      role: 'agent',
      data: withFile(alpha.render('agent'), { path: `/../../../../../..${escapee}`, content: 'written by a tenant' }),
    });
    const climbed = await alpha.condition('alpha-climber', 'Ready', SimConditionReason.BootstrapDataInvalid);
    expect(climbed.message).toContain(".path must be an absolute path without '..' segments");
    expect(existsSync(escapee)).toBe(false);

    await alpha.machine('alpha-bomb', {
      role: 'agent',
      data: withFile(alpha.render('agent'), {
        path: '/var/lib/bomb',
        encoding: 'gzip+base64',
        content: gzipSync(Buffer.alloc(64 * 1024 * 1024)).toString('base64'),
      }),
    });
    expect((await alpha.condition('alpha-bomb', 'Ready', SimConditionReason.BootstrapDataInvalid)).message).toContain('decodes to more than');
  });

  it('plays injected node faults: NotReady, then gone', async () => {
    await alpha.machine('alpha-flaky', {
      role: 'agent',
      spec: { nodeNotReadyAfterSeconds: 3, nodeDisappearsAfterSeconds: 8 },
    });
    await alpha.condition(
      'alpha-flaky',
      SimConditionType.NodeRunning,
      SimConditionReason.NodeNotReadyInjected,
      60_000,
    );
    const core = await alpha.workloadCore();
    const node = await core.readNode({ name: 'alpha-flaky' });
    expect(node.status?.conditions?.find((c) => c.type === 'Ready')).toMatchObject({
      status: 'Unknown',
      reason: 'NodeStatusUnknown',
    });
    await alpha.condition(
      'alpha-flaky',
      SimConditionType.NodeRunning,
      SimConditionReason.NodeDeletedInjected,
      30_000,
    );
    await expect(core.readNode({ name: 'alpha-flaky' })).rejects.toMatchObject({ code: 404 });
    // The infrastructure itself stays provisioned: it is the Node that died.
    expect((await alpha.simMachine('alpha-flaky')).status?.initialization?.provisioned).toBe(true);
  });

  it('applies fault fields changed on a running machine at once, and a removed not-ready fault lets it recover', async () => {
    const simMachines = client.resource<SimMachine>(RESOURCES.SimMachine);
    await alpha.machine('alpha-later', { role: 'agent' });
    await eventually(async () => (await alpha.readyNodes()).includes('alpha-later'), {
      timeoutMs: 60_000,
      message: 'alpha-later Ready',
    });
    // Counted from registration, as at boot: 0 s is already due.
    await simMachines.mergePatch({ namespace: ns.name, name: 'alpha-later' }, { spec: { nodeNotReadyAfterSeconds: 0 } });
    await alpha.condition('alpha-later', SimConditionType.NodeRunning, SimConditionReason.NodeNotReadyInjected, 30_000);
    const core = await alpha.workloadCore();
    const stopped = await core.readNode({ name: 'alpha-later' });
    expect(stopped.status?.conditions?.find((c) => c.type === 'Ready')?.status).toBe('Unknown');
    expect(stopped.spec?.taints?.map((t) => t.key)).toContain('node.kubernetes.io/unreachable');

    await simMachines.jsonPatch({ namespace: ns.name, name: 'alpha-later' }, [
      { op: 'remove', path: '/spec/nodeNotReadyAfterSeconds' },
    ]);
    await eventually(async () => (await alpha.readyNodes()).includes('alpha-later'), {
      timeoutMs: 30_000,
      message: 'alpha-later Ready again',
    });
    // Its taints go: the node takes off what it put on, and the cluster's node lifecycle controller the unreachable
    // taint it may have added meanwhile, on its next pass once the node reports Ready.
    await eventually(async () => ((await core.readNode({ name: 'alpha-later' })).spec?.taints ?? []).length === 0, {
      timeoutMs: 30_000,
      message: 'alpha-later without taints',
    });
    await alpha.condition('alpha-later', SimConditionType.NodeRunning, SimConditionReason.NodeRegistered, 30_000);
  });

  it('serves a shared-mode cluster through its own endpoint from the one shared API server', async () => {
    const gamma = await SimClusterFixture.create(client, ns.name, 'gamma', { mode: 'shared' });
    await gamma.machine('gamma-cp-0', { role: 'init-server' });
    await gamma.machine('gamma-md-0', { role: 'agent' });
    // The shared API server holds every shared cluster's nodes; gamma's are there, Ready.
    await eventually(
      async () => {
        const ready = await gamma.readyNodes();
        return ready.includes('gamma-cp-0') && ready.includes('gamma-md-0');
      },
      {
        timeoutMs: 90_000,
        message: 'gamma nodes Ready',
      },
    );
    const review = await (await gamma.workloadCore()).readNode({ name: 'gamma-md-0' });
    expect(review.spec?.providerID).toBe(`sim://${ns.name}/gamma-md-0`);
    await gamma.condition('gamma-cp-0', SimConditionType.APIServerHealthy);
  });

  it('deletes the Node with its machine, and stops the API server with the last server', async () => {
    const simMachines = client.resource<SimMachine>(RESOURCES.SimMachine);
    await simMachines.delete({ namespace: ns.name, name: 'alpha-md-1' });
    await eventually(
      async () =>
        simMachines.get({ namespace: ns.name, name: 'alpha-md-1' }).then(
          () => false,
          () => true,
        ),
      { timeoutMs: 30_000, message: 'alpha-md-1 gone' },
    );
    const core = await alpha.workloadCore();
    await expect(core.readNode({ name: 'alpha-md-1' })).rejects.toMatchObject({ code: 404 });
    expect((await published('alpha-md-1', 'deleted')).data).toMatchObject({
      clusterName: 'alpha',
      machineName: 'alpha-md-1',
    });

    await simMachines.delete({ namespace: ns.name, name: 'alpha-cp-0' });
    await eventually(
      async () =>
        simMachines.get({ namespace: ns.name, name: 'alpha-cp-0' }).then(
          () => false,
          () => true,
        ),
      { timeoutMs: 30_000, message: 'alpha-cp-0 gone' },
    );
    await expect(core.listNode()).rejects.toBeDefined();
  });
});
