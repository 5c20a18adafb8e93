export * from './admin-auth.guard.js';
export * from './caller-reviews.js';
export type { Clock } from './expiring-lru.js';
export * from './logger.js';
export * from './readiness.js';
export * from './service-endpoints.js';
export * from './access-reviews.js';
export * from './dashboard-audience.js';
