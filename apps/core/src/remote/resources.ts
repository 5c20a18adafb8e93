// Core kinds of a workload cluster (and the management cluster's Secrets) the core reads and writes.
export { NODES, PODS, SECRETS } from '@capstan/kube';
