import type { ResourceType } from './resource.js';

/** Built-in kinds the services and tests read and write, addressed as the runtime addresses any kind. */
const core = (plural: string, kind: string, namespaced: boolean): ResourceType => ({
  group: '',
  version: 'v1',
  plural,
  kind,
  namespaced,
});

export const CONFIG_MAPS = core('configmaps', 'ConfigMap', true);
export const NAMESPACES = core('namespaces', 'Namespace', false);
export const NODES = core('nodes', 'Node', false);
export const PODS = core('pods', 'Pod', true);
export const SECRETS = core('secrets', 'Secret', true);

export const CUSTOM_RESOURCE_DEFINITIONS: ResourceType = {
  group: 'apiextensions.k8s.io',
  version: 'v1',
  plural: 'customresourcedefinitions',
  kind: 'CustomResourceDefinition',
  namespaced: false,
};
