export * from './conversion-error.js';
export * from './conversion-data.js';
export * from './durations.js';
export * from './references.js';
export * from './convert.js';
export * from './conversion-review.js';
