import { addressInCidr } from './service-network.js';

/** The first pod address of a node's CIDR: `.1` is the node's bridge, as flannel's cni0 on K3s. */
const FIRST_POD_OFFSET = 2;

/**
 * Pod IPs per node, from the node's `spec.podCIDR` (the controller manager's node IPAM assigns it). An address is
 * held from the moment a pod gets it until the pod is gone, so two pods never share one even before the cache shows
 * the first pod's status.
 */
export class PodAddresses {
  /** node -> pod uid -> IP */
  private readonly byNode = new Map<string, Map<string, string>>();

  /** Records an address a pod already has (found on a pod at start, or written by this kubelet). */
  hold(node: string, podUID: string, ip: string): void {
    let held = this.byNode.get(node);
    if (!held) this.byNode.set(node, (held = new Map()));
    held.set(podUID, ip);
  }

  /** The pod's address on the node: the one it holds, else the lowest free one; undefined when the CIDR is full or unusable. */
  assign(node: string, podCIDR: string, podUID: string): string | undefined {
    const held = this.byNode.get(node);
    const current = held?.get(podUID);
    if (current !== undefined) return current;
    const used = new Set(held?.values() ?? []);
    for (let offset = FIRST_POD_OFFSET; ; offset++) {
      const ip = addressInCidr(podCIDR, offset);
      if (ip === undefined) return undefined;
      if (!used.has(ip)) {
        this.hold(node, podUID, ip);
        return ip;
      }
    }
  }

  release(node: string, podUID: string): void {
    const held = this.byNode.get(node);
    held?.delete(podUID);
    if (held?.size === 0) this.byNode.delete(node);
  }

  /** Addresses held on the node. */
  count(node: string): number {
    return this.byNode.get(node)?.size ?? 0;
  }
}
