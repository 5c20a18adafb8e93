import type { V1Secret } from '@kubernetes/client-node';
import { CLUSTER_SECRET_TYPE, LABELS, SECRET_KEYS, type K3sConfig } from '@capstan/api';
import { BOOTSTRAP_DATA_FORMAT } from '@capstan/k3s-bootstrap';
import { setControllerReference } from '@capstan/kube';
import { base64 } from './secrets.js';

/**
 * The bootstrap data Secret of a K3sConfig, as the bootstrap contract asks: named after the K3sConfig (so
 * the name is deterministic and survives a move), keys `value` and `format`, type `cluster.x-k8s.io/secret`,
 * the cluster-name label and the K3sConfig as controller (deleting the config deletes the data).
 */
export function bootstrapDataSecret(config: K3sConfig, clusterName: string, cloudConfig: string): V1Secret {
  const secret: V1Secret = {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: {
      name: config.metadata.name,
      namespace: config.metadata.namespace,
      labels: { [LABELS.clusterName]: clusterName },
    },
    type: CLUSTER_SECRET_TYPE,
    data: {
      [SECRET_KEYS.value]: base64(cloudConfig),
      [SECRET_KEYS.format]: base64(BOOTSTRAP_DATA_FORMAT),
    },
  };
  setControllerReference(config, secret);
  return secret;
}

export function dataSecretNameFor(config: K3sConfig): string {
  const name = config.metadata.name;
  if (!name) throw new TypeError('K3sConfig has no metadata.name');
  return name;
}
