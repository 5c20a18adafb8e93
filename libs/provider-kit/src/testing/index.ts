export * from './in-memory-controller-host.js';
