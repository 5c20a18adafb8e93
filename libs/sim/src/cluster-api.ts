import type { ApiEndpoint } from '@capstan/pki';
import { apiServerUrl } from '@capstan/pki';
import type { SimClusterMode } from '@capstan/api';
import type { ApiServerIdentity } from './api-server-certificates.js';
import type { StartOutcome } from './owned-process.js';

/** A workload cluster's API as its server machines bring it up. */
export interface ClusterApiSpec {
  namespace: string;
  clusterName: string;
  mode: SimClusterMode;
  endpoint: ApiEndpoint;
  identity: ApiServerIdentity;
  /** What the server machines installed (a plan can change it): the kube-apiserver binary and extra arguments. */
  installed?: InstalledServer;
  /** K3s `secrets-encryption: true`: Secrets encrypted at rest (turned on when the server starts). */
  secretsEncryption?: boolean;
}

/** The K3s release a server machine runs, and the kube-apiserver it makes of it. */
export interface InstalledServer {
  /** The K3s release (`v1.35.4+k3s1`). */
  version: string;
  /** The kube-apiserver binary of that minor. */
  kubeApiserver: string;
  /** `kube-apiserver-arg` of the machine's K3s config when it was installed, as `--name=value`. */
  extraArgs: string[];
  /** When it was installed (`boot` for the bootstrap data's install): a new install restarts the server. */
  installedAt: string;
}

/** The API of one workload cluster: its own kube-apiserver (dedicated) or a front proxy to the shared one. */
export interface ClusterApi {
  readonly spec: ClusterApiSpec;
  /** `namespace/cluster`. */
  readonly key: string;
  readonly url: string;
  /**
   * Starts (or adopts what an earlier provider left running) and waits until it answers. `member`: the server
   * (its node name) whose boot starts it, the first etcd member of a cluster with an etcd of its own.
   */
  start(options: { fresh: boolean; member?: string }): Promise<StartOutcome>;
  healthy(): Promise<boolean>;
  /** Stops serving; the cluster's data stays, a restarted provider serves it again. */
  stop(): Promise<void>;
  /** Stops serving and deletes the cluster's data: its last server machine is gone. */
  destroy(): Promise<void>;
  /**
   * This provider stops serving the cluster but leaves what another replica adopts running: a dedicated
   * kube-apiserver keeps running (its pid file stays); a shared cluster's front proxy, which lives in this
   * process, closes so the new owner can listen on the endpoint.
   */
  detach(): Promise<void>;
}

export function clusterKeyOf(namespace: string, clusterName: string): string {
  return `${namespace}/${clusterName}`;
}

export function endpointKeyOf(endpoint: ApiEndpoint): string {
  return apiServerUrl(endpoint);
}

/** The etcd key prefix of a dedicated cluster's API server. */
export function clusterEtcdPrefix(namespace: string, clusterName: string): string {
  return `/capstan-sim/${namespace}/${clusterName}`;
}

export const SHARED_ETCD_PREFIX = '/capstan-sim/shared';
