import { hostnameOf } from './host-plan.js';

describe('hostnameOf', () => {
  it('keeps a machine name of up to 63 characters', () => {
    const name = `m-${'a'.repeat(61)}`;
    expect(hostnameOf(name)).toBe(name);
  });

  it('cuts a longer name to one DNS label and drops the separators it ends on', () => {
    expect(hostnameOf(`${'a'.repeat(62)}-b${'c'.repeat(10)}`)).toBe('a'.repeat(62));
    expect(hostnameOf('b'.repeat(70))).toHaveLength(63);
  });
});
