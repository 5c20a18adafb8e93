import { createHash } from 'node:crypto';

function score(member: string, key: string): bigint {
  return createHash('sha256').update(member).update('\0').update(key).digest().readBigUInt64BE(0);
}

/**
 * Rendezvous (highest random weight) hashing: the member with the highest hash of (member, key) owns the key.
 * A member joining takes only the keys it now wins and a member leaving gives up only its own, so membership
 * changes move as few keys as possible; every replica computes the same owner from the same member list.
 */
export function rendezvousOwner(members: readonly string[], key: string): string | undefined {
  let owner: string | undefined;
  let best = -1n;
  for (const member of members) {
    const s = score(member, key);
    if (s > best || (s === best && owner !== undefined && member < owner)) {
      best = s;
      owner = member;
    }
  }
  return owner;
}
