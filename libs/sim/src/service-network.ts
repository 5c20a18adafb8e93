import { isIP } from 'node:net';

/** K3s's defaults (the renderer leaves them out unless the K3sConfig sets them). */
export const K3S_DEFAULT_SERVICE_CIDR = '10.43.0.0/16';
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
 * The `kubernetes` Service's cluster IP: the first address of each service CIDR (comma-separated for dual
 * stack), which the API server's serving certificate must name.
 */
export function apiServiceIPs(serviceCIDR: string): string[] {
  return serviceCIDR.split(',').flatMap((cidr) => {
    const [network = '', bits] = cidr.trim().split('/');
    if (bits === undefined) return [];
    const family = isIP(network);
    if (family === 4) return [bigIntToIpv4(ipv4ToBigInt(network) + 1n)];
    if (family === 6) return [bigIntToIpv6(ipv6ToBigInt(network) + 1n)];
    return [];
  });
}
