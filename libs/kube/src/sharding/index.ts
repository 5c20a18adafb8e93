export * from './rendezvous.js';
export * from './shard-membership.js';
