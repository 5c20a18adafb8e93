import { readFileSync } from 'node:fs';
import type { KubernetesObject } from '@kubernetes/client-node';
import { RESOURCES } from '@capstan/api';
import { NODES, SECRETS, type KubeClient } from '@capstan/kube';
import {
  gzipJson,
  MACHINE_PLAN_SECRET_TYPE,
  PLAN_KEYS,
  planSecretName,
  type MachinePlan,
} from '@capstan/node-agent';
import { CLUSTER_PAGE_RULES } from './dashboard-users.js';

// What a Machine's page reads besides the tree of dashboard-users.ts: infrastructure machines, a plan Secret, a Node,
// and the rules of the users who read them.

/** Reads a Machine's page: the Cluster page's kinds, the SimMachines, and the namespace's events (core/v1, as `view`). */
export const MACHINE_PAGE_RULES = [
  ...CLUSTER_PAGE_RULES,
  { apiGroups: ['infrastructure.capstan.dev'], resources: ['simmachines'], verbs: ['get', 'list', 'watch'] },
  { apiGroups: [''], resources: ['events'], verbs: ['get', 'list', 'watch'] },
];

/** Also gets the workload cluster's kubeconfig and one Machine's plan Secret, and no other Secret. */
export function machineReaderRules(clusterName: string, machineName: string): object[] {
  return [
    ...MACHINE_PAGE_RULES,
    {
      apiGroups: [''],
      resources: ['secrets'],
      resourceNames: [`${clusterName}-kubeconfig`, planSecretName(machineName)],
      verbs: ['get'],
    },
  ];
}

const now = () => new Date().toISOString().replace(/\.\d+Z$/, 'Z');

/** A provisioned SimMachine per name, with its providerID and a Ready condition. */
export async function createSimMachines(
  client: KubeClient,
  namespace: string,
  names: string[],
): Promise<void> {
  for (const name of names) {
    await client.resource(RESOURCES.SimMachine).create({
      apiVersion: RESOURCES.SimMachine.apiVersion,
      kind: 'SimMachine',
      metadata: { name, namespace },
      spec: { providerID: `sim://${namespace}/${name}` },
    } as KubernetesObject);
    await client.resource(RESOURCES.SimMachine).patchStatus(
      { namespace, name },
      {
        initialization: { provisioned: true },
        conditions: [
          { type: 'Ready', status: 'True', reason: 'Provisioned', message: '', lastTransitionTime: now() },
        ],
      },
    );
  }
}

/** The plan Secret of `machineName` as the bootstrap provider makes it and the node agent reports on it. */
export async function createPlanSecret(
  client: KubeClient,
  namespace: string,
  machineName: string,
  plan: MachinePlan,
  report: { state: string; failure?: string; output?: Record<string, string>; probes?: object },
): Promise<void> {
  const data: Record<string, Buffer> = {
    [PLAN_KEYS.plan]: Buffer.from(JSON.stringify(plan)),
    [PLAN_KEYS.state]: Buffer.from(report.state),
    [PLAN_KEYS.revision]: Buffer.from('1'),
    ...(report.failure
      ? {
          [PLAN_KEYS.failureMessage]: Buffer.from(report.failure),
          [PLAN_KEYS.failureCount]: Buffer.from('1'),
        }
      : {}),
    ...(report.output ? { [PLAN_KEYS.failedOutput]: gzipJson(report.output) } : {}),
    ...(report.probes ? { [PLAN_KEYS.probeStatuses]: Buffer.from(JSON.stringify(report.probes)) } : {}),
  };
  await client.resource(SECRETS).create({
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: planSecretName(machineName), namespace },
    type: MACHINE_PLAN_SECRET_TYPE,
    data: Object.fromEntries(Object.entries(data).map(([key, value]) => [key, value.toString('base64')])),
  } as KubernetesObject);
}

/** The test API server's own kubeconfig: the tests' "workload cluster" (as the core's tests use it). */
export function testApiServerKubeconfig(): string {
  const path = process.env['CAPSTAN_TEST_KUBECONFIG'];
  if (!path) throw new Error('CAPSTAN_TEST_KUBECONFIG is not set: run integration tests through `npm test`');
  return readFileSync(path, 'utf8');
}

/** A Node of the "workload cluster" (the test API server), Ready, with system info and an address. */
export async function createNode(client: KubeClient, name: string): Promise<void> {
  await client
    .resource(NODES)
    .create({ apiVersion: 'v1', kind: 'Node', metadata: { name } } as KubernetesObject);
  await client.resource(NODES).patchStatus(
    { name },
    {
      conditions: [
        {
          type: 'Ready',
          status: 'True',
          reason: 'KubeletReady',
          message: 'kubelet is posting ready status',
          lastHeartbeatTime: now(),
          lastTransitionTime: now(),
        },
      ],
      addresses: [{ type: 'InternalIP', address: '10.0.0.7' }],
      nodeInfo: {
        machineID: 'm',
        systemUUID: 's',
        bootID: 'b',
        kernelVersion: '6.1.0',
        osImage: 'Capstan Test',
        containerRuntimeVersion: 'containerd://2.0.0',
        kubeletVersion: 'v1.34.4',
        kubeProxyVersion: 'v1.34.4',
        operatingSystem: 'linux',
        architecture: 'amd64',
      },
    },
  );
}

/** The Machine's status once its Node exists: nodeRef, phase Running, its address and the node's system info. */
export async function setMachineNode(
  client: KubeClient,
  namespace: string,
  machineName: string,
  nodeName: string,
): Promise<void> {
  await client.resource(RESOURCES.Machine).patchStatus(
    { namespace, name: machineName },
    {
      phase: 'Running',
      nodeRef: { name: nodeName },
      addresses: [{ type: 'InternalIP', address: '10.0.0.7' }],
      nodeInfo: { kubeletVersion: 'v1.34.4', osImage: 'Capstan Test' },
    },
  );
}
