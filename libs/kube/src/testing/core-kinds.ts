import type { ResourceType } from '../resource.js';

export const CONFIG_MAPS: ResourceType = {
  group: '',
  version: 'v1',
  plural: 'configmaps',
  kind: 'ConfigMap',
  namespaced: true,
};
export const NAMESPACES: ResourceType = {
  group: '',
  version: 'v1',
  plural: 'namespaces',
  kind: 'Namespace',
  namespaced: false,
};
