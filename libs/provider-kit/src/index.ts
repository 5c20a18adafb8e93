export * from './service-options.js';
