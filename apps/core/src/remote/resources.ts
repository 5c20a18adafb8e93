import { type ResourceType } from '@capstan/kube';

// Core kinds of a workload cluster (and the management cluster's Secrets) the core reads and writes.

export const NODES: ResourceType = {
  group: '',
  version: 'v1',
  plural: 'nodes',
  kind: 'Node',
  namespaced: false,
};
export const PODS: ResourceType = { group: '', version: 'v1', plural: 'pods', kind: 'Pod', namespaced: true };
export const SECRETS: ResourceType = {
  group: '',
  version: 'v1',
  plural: 'secrets',
  kind: 'Secret',
  namespaced: true,
};
