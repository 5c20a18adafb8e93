/** Names of the core's Cluster and Machine controllers (admin API, metrics, hand-off enqueues). */
export const CLUSTER_CONTROLLER = 'cluster';
export const MACHINE_CONTROLLER = 'machine';
