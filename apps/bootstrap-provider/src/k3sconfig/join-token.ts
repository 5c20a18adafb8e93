import { randomBytes } from 'node:crypto';
import type { V1Secret } from '@kubernetes/client-node';
import {
  CLUSTER_SECRET_TYPE,
  ClusterSecretPurpose,
  LABELS,
  SECRET_KEYS,
  clusterSecretName,
  type Cluster,
} from '@capstan/api';
import {
  isAlreadyExists,
  isNotFound,
  setControllerReference,
  type Informer,
  type ResourceClient,
} from '@capstan/kube';
import { base64, secretText } from './secrets.js';

/** 32 random bytes, hex: what every server and agent of the cluster presents to join. */
export function generateJoinToken(): string {
  return randomBytes(32).toString('hex');
}

export function joinTokenSecret(cluster: Cluster, token: string): V1Secret {
  const secret: V1Secret = {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: {
      name: clusterSecretName(cluster.metadata.name!, ClusterSecretPurpose.Token),
      namespace: cluster.metadata.namespace,
      labels: { [LABELS.clusterName]: cluster.metadata.name! },
    },
    type: CLUSTER_SECRET_TYPE,
    data: { [SECRET_KEYS.value]: base64(token) },
  };
  // Owned by the Cluster: it lives as long as the cluster, whichever machines come and go.
  setControllerReference(cluster, secret, { blockOwnerDeletion: false });
  return secret;
}

/**
 * The cluster's join token from Secret `<cluster>-token`, created once with a random value. Reads the cache
 * first, then the API (the cache may lag a secret another reconcile just created); when two reconciles
 * race to create it, the loser reads the winner's.
 */
export async function ensureJoinToken(
  cluster: Cluster,
  secrets: ResourceClient<V1Secret>,
  cache: Informer<V1Secret>,
): Promise<string> {
  const namespace = cluster.metadata.namespace!;
  const name = clusterSecretName(cluster.metadata.name!, ClusterSecretPurpose.Token);
  const read = (secret: V1Secret) => {
    const token = secretText(secret, SECRET_KEYS.value);
    if (!token) throw new Error(`secret ${namespace}/${name} has no ${SECRET_KEYS.value} key`);
    return token;
  };
  const cached = cache.getByName(namespace, name);
  if (cached) return read(cached);
  try {
    return read(await secrets.get({ namespace, name }));
  } catch (error) {
    if (!isNotFound(error)) throw error;
  }
  try {
    return read(await secrets.create(joinTokenSecret(cluster, generateJoinToken())));
  } catch (error) {
    if (!isAlreadyExists(error)) throw error;
    return read(await secrets.get({ namespace, name }));
  }
}
