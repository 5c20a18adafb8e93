export * from './in-memory-controller-host.js';
export * from './test-service-options.js';
