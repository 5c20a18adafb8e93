export * from './errors.js';
export * from './binaries.js';
export * from './kubeconfig.js';
export * from './local-environment.js';
export * from './namespace.js';
export * from './ports.js';
export * from './processes.js';
export * from './test-environment.js';
