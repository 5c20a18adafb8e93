/** Where K3s reads its configuration (the same file for servers and agents). */
export const K3S_CONFIG_PATH = '/etc/rancher/k3s/config.yaml';

/** K3s's private registry configuration (https://docs.k3s.io/installation/private-registry). */
export const K3S_REGISTRIES_PATH = '/etc/rancher/k3s/registries.yaml';

/** One directory per registry for its certificate files, under K3s's data directory as Rancher's planner puts them. */
export const K3S_REGISTRY_TLS_DIR = '/var/lib/rancher/k3s/etc/tls/registries';

/** K3s's server TLS directory; CA files found here before the first start are used instead of generated. */
export const K3S_SERVER_TLS_DIR = '/var/lib/rancher/k3s/server/tls';

/** Where K3s's install.sh is kept: downloaded there online, pre-loaded there in air-gapped images. */
export const K3S_INSTALL_SCRIPT_PATH = '/opt/k3s/install.sh';

export const K3S_INSTALL_SCRIPT_URL = 'https://get.k3s.io';

/** Cluster API's bootstrap sentinel: written only when every command before it succeeded. */
export const BOOTSTRAP_SENTINEL_DIR = '/run/cluster-api';
export const BOOTSTRAP_SENTINEL_PATH = `${BOOTSTRAP_SENTINEL_DIR}/bootstrap-success.complete`;

/** The `format` key of the bootstrap data secret. */
export const BOOTSTRAP_DATA_FORMAT = 'cloud-config';

/** The node agent (docs/node-agent.md): its config, CA and token, its systemd unit and binary. */
export const NODE_AGENT_DIR = '/etc/capstan/agent';
export const NODE_AGENT_CONFIG_PATH = `${NODE_AGENT_DIR}/config.yaml`;
export const NODE_AGENT_CA_PATH = `${NODE_AGENT_DIR}/ca.crt`;
export const NODE_AGENT_TOKEN_PATH = `${NODE_AGENT_DIR}/token`;
export const NODE_AGENT_UNIT_PATH = '/etc/systemd/system/capstan-node-agent.service';
export const NODE_AGENT_BINARY_PATH = '/usr/local/bin/capstan-node-agent';
