import { PodAddresses } from './pod-addresses.js';

describe('PodAddresses', () => {
  it('gives each pod of a node its own address from the node CIDR, from .2 up, and reuses released ones', () => {
    const addresses = new PodAddresses();
    expect(addresses.assign('a', '10.42.1.0/24', 'p1')).toBe('10.42.1.2');
    expect(addresses.assign('a', '10.42.1.0/24', 'p2')).toBe('10.42.1.3');
    expect(addresses.assign('a', '10.42.1.0/24', 'p1')).toBe('10.42.1.2');
    expect(addresses.assign('b', '10.42.2.0/24', 'p3')).toBe('10.42.2.2');
    addresses.release('a', 'p1');
    expect(addresses.assign('a', '10.42.1.0/24', 'p4')).toBe('10.42.1.2');
    expect(addresses.count('a')).toBe(2);
  });

  it('keeps addresses pods already hold and says when the CIDR is full', () => {
    const addresses = new PodAddresses();
    addresses.hold('a', 'old', '10.42.1.2');
    expect(addresses.assign('a', '10.42.1.0/30', 'new')).toBeUndefined(); // .2 held, .3 is the broadcast address
    expect(addresses.assign('a', '10.42.1.0/29', 'new')).toBe('10.42.1.3');
  });
});
