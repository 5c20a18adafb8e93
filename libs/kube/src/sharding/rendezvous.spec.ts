import { rendezvousOwner } from './rendezvous.js';

const clusters = Array.from({ length: 3000 }, (_, i) => `ns-${i % 7}/cluster-${i}`);

describe('rendezvousOwner', () => {
  it('gives every key to exactly one member, the same one whatever order the members are listed in', () => {
    const members = ['replica-a', 'replica-b', 'replica-c'];
    for (const key of clusters.slice(0, 200)) {
      expect(rendezvousOwner(members, key)).toBe(rendezvousOwner([...members].reverse(), key));
    }
    expect(rendezvousOwner([], 'ns/c')).toBeUndefined();
    expect(rendezvousOwner(['only'], 'ns/c')).toBe('only');
  });

  it('spreads keys evenly: each of 3 members gets a third, within 10 %', () => {
    const members = ['replica-a', 'replica-b', 'replica-c'];
    const counts = new Map<string, number>();
    for (const key of clusters) {
      const owner = rendezvousOwner(members, key)!;
      counts.set(owner, (counts.get(owner) ?? 0) + 1);
    }
    for (const member of members) expect(Math.abs(counts.get(member)! - 1000)).toBeLessThan(100);
  });

  it('moves only the keys the joining member wins, and only the leaving member’s keys', () => {
    const before = ['replica-a', 'replica-b'];
    const after = ['replica-a', 'replica-b', 'replica-c'];
    let moved = 0;
    for (const key of clusters) {
      const was = rendezvousOwner(before, key);
      const is = rendezvousOwner(after, key);
      if (was !== is) {
        expect(is).toBe('replica-c');
        moved++;
      }
      // Leaving is the same move backwards: nobody but the leaver's keys change hands.
      expect(rendezvousOwner(before, key)).toBe(is === 'replica-c' ? was : is);
    }
    expect(moved / clusters.length).toBeGreaterThan(0.28);
    expect(moved / clusters.length).toBeLessThan(0.39);
  });
});
