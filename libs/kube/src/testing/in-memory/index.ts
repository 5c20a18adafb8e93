// `@capstan/kube/testing`: the in-memory API server (the one stand-in for the Kubernetes API) and the contract it
// shares with the real API server.
export { InMemoryApiServer, type InMemoryApiServerOptions, type ServedKind } from './in-memory-api-server.js';
export { kubeApiContract, type KubeApiUnderTest } from '../kube-api-contract.js';
