export * from './drain.js';
export * from './nodes.js';
export * from './resources.js';
export * from './workload-clusters.js';
