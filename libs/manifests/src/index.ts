export * from './apply.js';
export * from './install-crds.js';
export * from './manifests.js';
