export * from './admin-auth.guard.js';
export * from './logger.js';
export * from './readiness.js';
export * from './service-endpoints.js';
export * from './access-reviews.js';
