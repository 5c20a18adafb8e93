import type { NodeAgentBootstrap } from './node-agent-files.js';
import type { ApiEndpoint, ClusterCertificates } from '@capstan/pki';

/**
 * The inputs of the K3s bootstrap renderer. These mirror the K3sConfig API fields (k3s-io/cluster-api-k3s's
 * KThreesConfig shape) without depending on the API classes, so the renderer stays pure; the reconciler
 * maps the API object onto them and resolves `files[].contentFrom` secrets before rendering.
 */

/** `init-server` runs `cluster-init`; `join-server` and `agent` join through the control plane endpoint. */
export type K3sRole = 'init-server' | 'join-server' | 'agent';

export const K3S_ROLES: readonly K3sRole[] = ['init-server', 'join-server', 'agent'];

/** Settings every K3s node (server or agent) takes. */
export interface K3sAgentConfigSpec {
  /** `key=value` entries (K3s `node-label`). */
  nodeLabels?: readonly string[];
  /** `key=value:Effect` or `key:Effect` entries (K3s `node-taint`). */
  nodeTaints?: readonly string[];
  /** `flag=value` entries without the leading dashes (K3s `kubelet-arg`). */
  kubeletArgs?: readonly string[];
  /** `flag=value` entries (K3s `kube-proxy-arg`). */
  kubeProxyArgs?: readonly string[];
  /** K3s `node-name`; the host name when unset. */
  nodeName?: string;
}

/** Settings only servers take. */
export interface K3sServerConfigSpec {
  /** Extra subject alternative names of the API serving certificate (K3s `tls-san`). */
  tlsSANs?: readonly string[];
  /** Packaged components not to deploy, e.g. `traefik`, `servicelb` (K3s `disable`). */
  disableComponents?: readonly string[];
  /** Pod network CIDR(s), comma-separated for dual stack (K3s `cluster-cidr`). */
  clusterCIDR?: string;
  /** Service CIDR(s) (K3s `service-cidr`). */
  serviceCIDR?: string;
  /** Cluster IP(s) of the DNS service (K3s `cluster-dns`). */
  clusterDNS?: string;
  /** The cluster domain (K3s `cluster-domain`). */
  clusterDomain?: string;
  /** `flag=value` entries (K3s `kube-apiserver-arg`, `kube-controller-manager-arg`, `kube-scheduler-arg`). */
  kubeAPIServerArgs?: readonly string[];
  kubeControllerManagerArgs?: readonly string[];
  kubeSchedulerArgs?: readonly string[];
  /** Secrets encrypted at rest (K3s `secrets-encryption`). */
  secretsEncryption?: boolean;
}

/** A file written to the host; `content` is already encoded as `encoding` says (plain text when unset). */
export interface K3sFile {
  path: string;
  content: string;
  owner?: string;
  permissions?: string;
  encoding?: K3sFileEncoding;
}

/** The encodings upstream's bootstrap configs accept; cloud-init decodes them when writing. */
export type K3sFileEncoding = 'base64' | 'gzip' | 'gzip+base64';

/** The mirrors of one registry (K3s registries.yaml `mirrors`). */
export interface K3sRegistryMirror {
  /** Mirror URLs, tried in order. */
  endpoint?: readonly string[];
  /** Regular expression on the image name -> replacement. */
  rewrite?: Readonly<Record<string, string>>;
}

/** Credentials of one registry, read from its auth Secret: username and password, or an identity token. */
export interface K3sRegistryAuth {
  username?: string;
  password?: string;
  identityToken?: string;
}

/** Certificate material (PEM) and verification of one registry. */
export interface K3sRegistryTls {
  caPem?: string;
  /** A client certificate, with its key. */
  certPem?: string;
  keyPem?: string;
  insecureSkipVerify?: boolean;
}

export interface K3sRegistryConfig {
  auth?: K3sRegistryAuth;
  tls?: K3sRegistryTls;
}

/**
 * K3s's registries.yaml with the Secrets it names already read (K3sConfig `spec.privateRegistriesConfig`), keyed by
 * registry host[:port] or `*`. Credentials are never logged, never in an error message.
 */
export interface K3sRegistries {
  mirrors?: Readonly<Record<string, K3sRegistryMirror>>;
  configs?: Readonly<Record<string, K3sRegistryConfig>>;
}

export interface K3sConfigSpec {
  /** The K3s release to install, e.g. `v1.31.4+k3s1`. */
  version: string;
  serverConfig?: K3sServerConfigSpec;
  agentConfig?: K3sAgentConfigSpec;
  files?: readonly K3sFile[];
  /** Written to /etc/rancher/k3s/registries.yaml; unset: that file is left as the host has it. */
  registries?: K3sRegistries;
  preK3sCommands?: readonly string[];
  postK3sCommands?: readonly string[];
  /** Install from the image's pre-loaded script and binary instead of downloading them. */
  airGapped?: boolean;
  /** Where the air-gapped image keeps K3s's install.sh; `/opt/k3s/install.sh` when unset. */
  airGappedInstallScriptPath?: string;
}

export interface K3sBootstrapInput {
  role: K3sRole;
  spec: K3sConfigSpec;
  /** The cluster's control plane endpoint (`Cluster.spec.controlPlaneEndpoint`). */
  endpoint: ApiEndpoint;
  /** The join token (Secret `<cluster>-token`). Never logged, never in an error message. */
  token: string;
  /** Passed to the kubelet as `provider-id`, so the Node carries the machine's providerID. */
  providerID?: string;
  /** The cluster certificates; required for both server roles, ignored for agents. */
  certificates?: ClusterCertificates;
  /** The machine's node agent: installed and started after K3s when given (docs/node-agent.md). */
  nodeAgent?: NodeAgentBootstrap;
}
