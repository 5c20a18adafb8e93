import { CAPSTAN_PROVIDER_VERSION, CLUSTER_API_VERSION } from '../constants/groups.js';
import { LABELS, contractLabelKey } from '../constants/labels.js';
import type { PrinterColumn } from '../schema/metadata.js';

/** A column showing the status of one condition. */
export function conditionColumn(
  name: string,
  conditionType: string,
  description: string,
  priority?: number,
): PrinterColumn {
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

/** Desired, current, ready, available and up-to-date machines of a kind with replicas, as upstream prints them. */
export const REPLICA_COLUMNS: readonly PrinterColumn[] = [
  {
    name: 'Desired',
    type: 'integer',
    jsonPath: '.spec.replicas',
    description: 'The desired number of machines',
  },
  { name: 'Current', type: 'integer', jsonPath: '.status.replicas', description: 'The number of machines' },
  {
    name: 'Ready',
    type: 'integer',
    jsonPath: '.status.readyReplicas',
    description: 'The number of machines with Ready condition true',
  },
  {
    name: 'Available',
    type: 'integer',
    jsonPath: '.status.availableReplicas',
    description: 'The number of machines with Available condition true',
  },
  {
    name: 'Up-to-date',
    type: 'integer',
    jsonPath: '.status.upToDateReplicas',
    description: 'The number of machines with UpToDate condition true',
  },
];

/** The Cluster's counters of one group of machines (`controlPlane` or `workers`), e.g. `CP Desired`. */
export function clusterReplicaColumns(
  prefix: string,
  group: 'controlPlane' | 'workers',
  what: string,
): PrinterColumn[] {
  const column = (name: string, field: string, description: string, priority?: number): PrinterColumn => ({
    name: `${prefix} ${name}`,
    type: 'integer',
    jsonPath: `.status.${group}.${field}`,
    description: `The number of ${what} machines${description}`,
    ...(priority === undefined ? {} : { priority }),
  });
  return [
    { ...column('Desired', 'desiredReplicas', ''), description: `The desired number of ${what} machines` },
    column('Current', 'replicas', '', 10),
    column('Ready', 'readyReplicas', ' with Ready condition true', 10),
    column('Available', 'availableReplicas', ' with Available condition true'),
    column('Up-to-date', 'upToDateReplicas', ' with UpToDate condition true'),
  ];
}
