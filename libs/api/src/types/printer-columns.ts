import { CAPSTAN_PROVIDER_VERSION, CLUSTER_API_VERSION } from '../constants/groups.js';
import { LABELS, contractLabelKey } from '../constants/labels.js';
import type { PrinterColumn } from '../schema/metadata.js';

/** A column showing the status of one condition. */
export function conditionColumn(name: string, conditionType: string, description: string, priority?: number): PrinterColumn {
  return {
    name,
    type: 'string',
    jsonPath: `.status.conditions[?(@.type=="${conditionType}")].status`,
    description,
    ...(priority === undefined ? {} : { priority }),
  };
}

/** The cluster an object belongs to, from its `cluster.x-k8s.io/cluster-name` label. */
export const CLUSTER_LABEL_COLUMN: PrinterColumn = {
  name: 'Cluster',
  type: 'string',
  jsonPath: `.metadata.labels['${LABELS.clusterName.replaceAll('.', '\\.')}']`,
  description: 'Cluster',
};

export const AGE_COLUMN: PrinterColumn = {
  name: 'Age',
  type: 'date',
  jsonPath: '.metadata.creationTimestamp',
  description: 'Time since creation',
};

/** Labels of the core CRDs: the contract they speak, as upstream's core CRDs carry. */
export const CORE_CRD_LABELS: Record<string, string> = {
  [contractLabelKey('v1beta2')]: CLUSTER_API_VERSION,
  [LABELS.provider]: 'cluster-api',
};

/** Labels of a Capstan provider CRD: the v1beta2 contract label (mandatory) and the provider name. */
export function providerCrdLabels(provider: string): Record<string, string> {
  return { [contractLabelKey('v1beta2')]: CAPSTAN_PROVIDER_VERSION, [LABELS.provider]: provider };
}
