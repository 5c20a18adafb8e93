export * from './objects.js';
export * from './human-duration.js';
export * from './tree.js';
