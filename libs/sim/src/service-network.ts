import { isIP } from 'node:net';

/** K3s's defaults (the renderer leaves them out unless the K3sConfig sets them). */
export const K3S_DEFAULT_SERVICE_CIDR = '10.43.0.0/16';
export const K3S_DEFAULT_CLUSTER_CIDR = '10.42.0.0/16';
export const K3S_DEFAULT_CLUSTER_DOMAIN = 'cluster.local';

function ipv4ToBigInt(ip: string): bigint {
  return ip.split('.').reduce((acc, part) => (acc << 8n) + BigInt(Number(part)), 0n);
}

function bigIntToIpv4(value: bigint): string {
  return [24n, 16n, 8n, 0n].map((shift) => String((value >> shift) & 0xffn)).join('.');
}

function ipv6ToBigInt(ip: string): bigint {
  const [head = '', tail = ''] = ip.split('::');
  const headParts = head === '' ? [] : head.split(':');
  const tailParts = ip.includes('::') ? (tail === '' ? [] : tail.split(':')) : [];
  const parts = ip.includes('::')
    ? [...headParts, ...Array<string>(8 - headParts.length - tailParts.length).fill('0'), ...tailParts]
    : headParts;
  return parts.reduce((acc, part) => (acc << 16n) + BigInt(parseInt(part, 16)), 0n);
}

function bigIntToIpv6(value: bigint): string {
  const groups = [];
  for (let shift = 112n; shift >= 0n; shift -= 16n) groups.push(((value >> shift) & 0xffffn).toString(16));
  return groups.join(':');
}

/**
 * The address `offset` past the network address of `cidr` (`10.42.3.0/24`, 2 -> `10.42.3.2`); undefined when the CIDR
 * is not one or the offset falls outside it (the broadcast address of an IPv4 network included).
 */
export function addressInCidr(cidr: string, offset: number): string | undefined {
  const [network = '', bits] = cidr.trim().split('/');
  const prefix = Number(bits);
  const family = isIP(network);
  if (family === 0 || !Number.isInteger(prefix) || offset < 0) return undefined;
  const width = family === 4 ? 32 : 128;
  if (prefix < 0 || prefix > width) return undefined;
  const size = 1n << BigInt(width - prefix);
  if (BigInt(offset) >= (family === 4 ? size - 1n : size)) return undefined;
  return family === 4
    ? bigIntToIpv4(ipv4ToBigInt(network) + BigInt(offset))
    : bigIntToIpv6(ipv6ToBigInt(network) + BigInt(offset));
}

/**
 * The `kubernetes` Service's cluster IP: the first address of each service CIDR (comma-separated for dual
 * stack), which the API server's serving certificate must name.
 */
export function apiServiceIPs(serviceCIDR: string): string[] {
  return serviceCIDR.split(',').flatMap((cidr) => addressInCidr(cidr, 1) ?? []);
}
