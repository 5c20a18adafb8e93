import { redactNote } from './event-recorder.js';
import { microTime } from './micro-time.js';

describe('event notes', () => {
  it('lose PEM blocks and bearer tokens', () => {
    const note =
      'bootstrap failed: -----BEGIN RSA PRIVATE KEY-----\nMIIEow\n-----END RSA PRIVATE KEY----- sent with Bearer abcdef0123456789';
    const redacted = redactNote(note);
    expect(redacted).not.toContain('MIIEow');
    expect(redacted).not.toContain('abcdef0123456789');
    expect(redacted).toContain('bootstrap failed');
  });

  it('keep ordinary text', () => {
    expect(redactNote('Machine m-1 provisioned in 3 s')).toBe('Machine m-1 provisioned in 3 s');
  });
});

describe('microTime', () => {
  it('has exactly six fractional digits', () => {
    expect(microTime(new Date('2026-01-02T03:04:05.678Z'))).toBe('2026-01-02T03:04:05.678000Z');
  });
});
