import { parse as parseYaml } from 'yaml';
import type { KubernetesObject } from '@kubernetes/client-node';
import { clusterSecretName, ClusterSecretPurpose, SECRET_KEYS } from '@capstan/api';
import {
  connectionFromKubeconfig,
  isForbidden,
  isNotFound,
  KubeApiError,
  KubeClient,
  NODES,
  SECRETS,
} from '@capstan/kube';
import { conditionViews, type ConditionView } from './condition-view.js';
import { DASHBOARD_FIELD_MANAGER } from '../api/user-clients.js';

/** How long the page waits for a workload cluster's API server: a Machine's page must not hang on a dead cluster. */
export const WORKLOAD_NODE_TIMEOUT_MS = 3_000;

/** A workload cluster's Node as a Machine's page shows it: its conditions, system info and addresses. */
export interface NodeView {
  name: string;
  conditions: ConditionView[];
  nodeInfo?: Record<string, string>;
  addresses?: { type: string; address: string }[];
}

/** The Node, or why the page has none (said to the user as it is). */
export type NodeAnswer = { node: NodeView } | { unavailable: string };

interface NodeObject extends KubernetesObject {
  status?: { conditions?: unknown[]; nodeInfo?: Record<string, unknown>; addresses?: unknown[] };
}

/**
 * Keys of a kubeconfig that make its reader read a local file or run a program. A kubeconfig from a Secret must hold
 * its credentials inline: with `tokenFile: /var/run/secrets/.../token` and a server of their choosing, whoever wrote
 * the Secret would have the dashboard send its own token (which may impersonate anyone) there.
 */
const LOCAL_KEYS = [
  'certificate-authority',
  'client-certificate',
  'client-key',
  'tokenFile',
  'exec',
  'auth-provider',
];

/**
 * Reads `nodeName` from the workload cluster of `clusterName`. The kubeconfig Secret is read with `userClient` (the
 * signed-in user, impersonated), so a user who may not get it gets no Node and is told why; the workload cluster is
 * then asked with that kubeconfig, bounded by WORKLOAD_NODE_TIMEOUT_MS. Nothing of the kubeconfig ever leaves here:
 * not in the answer, not in an error.
 */
export async function readWorkloadNode(
  userClient: KubeClient,
  namespace: string,
  clusterName: string,
  nodeName: string,
  timeoutMs = WORKLOAD_NODE_TIMEOUT_MS,
): Promise<NodeAnswer> {
  const secretName = clusterSecretName(clusterName, ClusterSecretPurpose.Kubeconfig);
  let secret: KubernetesObject & { data?: Record<string, string> };
  try {
    secret = await userClient
      .resource<KubernetesObject & { data?: Record<string, string> }>(SECRETS)
      .get({ namespace, name: secretName });
  } catch (error) {
    if (isForbidden(error))
      return {
        unavailable: `reading the Node takes the workload cluster's kubeconfig (Secret ${namespace}/${secretName}), which you may not get`,
      };
    if (isNotFound(error))
      return {
        unavailable: `the workload cluster has no kubeconfig yet (Secret ${namespace}/${secretName})`,
      };
    throw error;
  }
  const encoded = secret.data?.[SECRET_KEYS.value];
  if (!encoded) return { unavailable: `Secret ${namespace}/${secretName} holds no kubeconfig` };
  const kubeconfig = Buffer.from(encoded, 'base64').toString('utf8');
  if (!selfContained(kubeconfig))
    return {
      unavailable: `the kubeconfig in Secret ${namespace}/${secretName} refers to local files or plugins, which the dashboard does not use`,
    };
  let client: KubeClient;
  try {
    client = new KubeClient(connectionFromKubeconfig(kubeconfig), {
      fieldManager: DASHBOARD_FIELD_MANAGER,
      requestTimeoutMs: timeoutMs,
    });
  } catch {
    // The parser's message may quote the document: said in our words only.
    return { unavailable: `the kubeconfig in Secret ${namespace}/${secretName} cannot be used` };
  }
  try {
    const node = await client.resource<NodeObject>(NODES).get({ name: nodeName });
    return { node: nodeView(node) };
  } catch (error) {
    if (isNotFound(error)) return { unavailable: `Node ${nodeName} is not in the workload cluster` };
    if (error instanceof KubeApiError)
      return {
        unavailable: `the workload cluster's API server answered ${error.code} ${error.reason ?? ''}`.trim(),
      };
    return { unavailable: `the workload cluster's API server did not answer within ${timeoutMs / 1000} s` };
  } finally {
    await client.close();
  }
}

/** Whether no context, cluster or user of the kubeconfig names a local file or a plugin. */
function selfContained(kubeconfig: string): boolean {
  let document: unknown;
  try {
    document = parseYaml(kubeconfig);
  } catch {
    return false;
  }
  if (document === null || typeof document !== 'object') return false;
  const entries = ['clusters', 'users'].flatMap((list) => {
    const named = (document as Record<string, unknown>)[list];
    return Array.isArray(named)
      ? named.map((entry) => (entry as { cluster?: unknown; user?: unknown } | null) ?? {})
      : [];
  });
  return entries.every((entry) => {
    const body = (entry.cluster ?? entry.user ?? {}) as Record<string, unknown>;
    return typeof body === 'object' && LOCAL_KEYS.every((key) => !(key in body));
  });
}

function nodeView(node: NodeObject): NodeView {
  const info = node.status?.nodeInfo;
  const nodeInfo = info
    ? Object.fromEntries(
        Object.entries(info).filter((entry): entry is [string, string] => typeof entry[1] === 'string'),
      )
    : undefined;
  const addresses = (node.status?.addresses ?? [])
    .map((a) => a as { type?: unknown; address?: unknown })
    .filter(
      (a): a is { type: string; address: string } =>
        typeof a.type === 'string' && typeof a.address === 'string',
    )
    .map(({ type, address }) => ({ type, address }));
  return {
    name: node.metadata?.name ?? '',
    conditions: conditionViews(node.status?.conditions),
    ...(nodeInfo && Object.keys(nodeInfo).length > 0 ? { nodeInfo } : {}),
    ...(addresses.length > 0 ? { addresses } : {}),
  };
}
