// The part of this library the sim runs in production services (processes, ports, binaries, the repo's paths): it
// loads no Kubernetes client, so a service importing it does not pay for client-node (docs/performance.md).
export * from './errors.js';
export * from './binaries.js';
export * from './ports.js';
export * from './processes.js';
export * from './repo.js';
