export * from './apply.js';
export * from './image-overrides.js';
export * from './install-admission-policies.js';
export * from './install-crds.js';
export * from './manifests.js';
export * from './template-variables.js';
