export * from './cluster-template.js';
export * from './validate.js';
