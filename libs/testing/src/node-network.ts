import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { TestEnvironmentError } from './errors.js';

/**
 * The real node's network, on addresses the project owns (10.213.0.0/16) and nowhere else: the node IP on a dummy
 * interface the project creates (a kubelet refuses a loopback node IP, and pods cannot reach the host's loopback), and
 * a bridge for the pods that CNI's bridge plugin creates on first use. Pods get no masquerade and no route out: their
 * traffic only reaches the node and each other. Services are kube-proxy's virtual IPs in the API server's range.
 * The node interface is one end of a veth pair: the `dummy` link type needs a kernel module a container cannot load.
 */
export const NODE_NETWORK = {
  nodeLink: 'capstan0',
  nodeLinkPeer: 'capstan0-peer',
  nodeIp: '10.213.0.1',
  bridge: 'capstan-br0',
  podSubnet: '10.213.64.0/18',
  podGateway: '10.213.64.1',
  serviceSubnet: '10.96.0.0/16',
  /** The cluster DNS Service's address (kubelet's clusterDNS). */
  dnsServiceIp: '10.96.0.10',
  clusterDomain: 'cluster.local',
} as const;

function ip(args: string[]): string {
  try {
    return execFileSync('ip', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (error) {
    const stderr = (error as { stderr?: string }).stderr ?? '';
    throw new TestEnvironmentError(
      `ip ${args.join(' ')} failed: ${stderr.trim() || (error as Error).message}`,
      {
        command: `ip ${args.join(' ')}`,
      },
    );
  }
}

function linkExists(name: string): boolean {
  return existsSync(`/sys/class/net/${name}`);
}

/** Creates the node interface with the node IP (after removing what a killed run left); needs CAP_NET_ADMIN. */
export function createNodeNetwork(): void {
  removeNodeNetwork();
  ip(['link', 'add', NODE_NETWORK.nodeLink, 'type', 'veth', 'peer', 'name', NODE_NETWORK.nodeLinkPeer]);
  ip(['addr', 'add', `${NODE_NETWORK.nodeIp}/32`, 'dev', NODE_NETWORK.nodeLink]);
  ip(['link', 'set', NODE_NETWORK.nodeLinkPeer, 'up']);
  ip(['link', 'set', NODE_NETWORK.nodeLink, 'up']);
}

/** Removes the node interface, the pod bridge and every pod network namespace containerd's CNI calls left. */
export function removeNodeNetwork(): void {
  removePodNetworkNamespaces();
  removePodLinks();
  // Deleting one end of the veth pair deletes the other.
  for (const link of [NODE_NETWORK.bridge, NODE_NETWORK.nodeLink]) {
    if (linkExists(link)) ip(['link', 'del', link]);
  }
}

/**
 * The host ends of the pods' veth pairs, on the bridge. A pod whose namespace went with its processes takes its pair
 * along only when the kernel gets round to freeing the namespace, which can be minutes after a teardown; deleting the
 * host end deletes the pair at once.
 */
function removePodLinks(): void {
  if (!linkExists(NODE_NETWORK.bridge)) return;
  const links = ip(['-o', 'link', 'show', 'master', NODE_NETWORK.bridge])
    .split('\n')
    .map((line) => /^\d+:\s+([^@:\s]+)/.exec(line)?.[1])
    .filter((name): name is string => name !== undefined);
  for (const link of links) {
    try {
      ip(['link', 'del', link]);
    } catch {
      /* gone with its namespace meanwhile */
    }
  }
}

/**
 * containerd's CRI plugin keeps each pod sandbox's network namespace bind-mounted at /var/run/netns/cni-<id>. A
 * sandbox that is stopped properly removes its own; a killed node leaves them (and with them the veth ends on the
 * bridge). Only one real node runs on a host at a time (the node lock), so every cni-* namespace here is ours.
 */
function removePodNetworkNamespaces(): void {
  const dir = '/var/run/netns';
  if (!existsSync(dir)) return;
  for (const name of readdirSync(dir).filter((entry) => entry.startsWith('cni-'))) {
    const path = join(dir, name);
    try {
      execFileSync('umount', [path], { stdio: 'ignore' });
    } catch {
      /* not mounted any more */
    }
    rmSync(path, { force: true });
  }
}

/** The CNI configuration for the pods: the bridge plugin with host-local addresses from the pod subnet, no masquerade. */
export function writeCniConfig(confDir: string, ipamDataDir: string): void {
  const config = {
    cniVersion: '1.0.0',
    name: 'capstan-pods',
    plugins: [
      {
        type: 'bridge',
        bridge: NODE_NETWORK.bridge,
        isGateway: true,
        ipMasq: false,
        hairpinMode: true,
        ipam: {
          type: 'host-local',
          dataDir: ipamDataDir,
          ranges: [[{ subnet: NODE_NETWORK.podSubnet, gateway: NODE_NETWORK.podGateway }]],
          routes: [{ dst: `${NODE_NETWORK.nodeIp}/32` }, { dst: NODE_NETWORK.serviceSubnet }],
        },
      },
      { type: 'portmap', capabilities: { portMappings: true } },
    ],
  };
  writeFileSync(join(confDir, '10-capstan-pods.conflist'), JSON.stringify(config, null, 2));
}

/** Mount points at or under `dir` (deepest first), read from /proc/self/mountinfo. */
export function mountsUnder(dir: string): string[] {
  const prefix = dir.endsWith('/') ? dir : `${dir}/`;
  return readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .map((line) => line.split(' ')[4]?.replaceAll('\\040', ' '))
    .filter((mount): mount is string => mount !== undefined && (mount === dir || mount.startsWith(prefix)))
    .sort((a, b) => b.length - a.length);
}

/** Unmounts everything at or under `dir` (pod volumes, container root filesystems), deepest first. */
export function unmountUnder(dir: string): void {
  for (const mount of mountsUnder(dir)) {
    try {
      execFileSync('umount', ['-l', mount], { stdio: 'ignore' });
    } catch {
      /* gone meanwhile */
    }
  }
}
