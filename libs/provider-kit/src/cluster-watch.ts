import type { Cluster } from '@capstan/api';
import { specMetadataOrStatusFieldsChanged } from '@capstan/kube';

/**
 * The Cluster updates a provider acts on: its spec (pause, endpoint, references), metadata (the paused annotation,
 * deletion), `status.initialization` and `status.failureDomains`. Not the conditions, counters and phase the core
 * writes as machines come up: reacting to those reconciled every provider object of a cluster once per Cluster status
 * write, about 30 times each while a cluster came up (bench:upstream at 10 clusters).
 */
export const clusterChangesProvidersRead = specMetadataOrStatusFieldsChanged<Cluster>('initialization', 'failureDomains');
