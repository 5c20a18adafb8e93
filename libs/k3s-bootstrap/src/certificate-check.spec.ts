import { certificateCheckInstruction, certificateRotateArgs, certificatesExpiryIn } from './certificate-check.js';

describe('the certificate check of a server', () => {
  it('reads the earliest expiry of the JSON array a check printed, after whatever came before it', () => {
    const check = JSON.stringify([
      { filename: 'a.crt', expiryTime: '2027-11-28T10:00:00Z' },
      { filename: 'b.crt', expiryTime: '2026-12-13T10:00:00Z' },
    ]);
    expect(certificatesExpiryIn(check)).toEqual(new Date('2026-12-13T10:00:00Z'));
    expect(certificatesExpiryIn(`Certificates rotated for admin\n${check}\n`)).toEqual(
      new Date('2026-12-13T10:00:00Z'),
    );
  });

  it('takes nothing from output that is not a well-formed check', () => {
    expect(certificatesExpiryIn('')).toBeUndefined();
    expect(certificatesExpiryIn('k3s: not installed')).toBeUndefined();
    expect(certificatesExpiryIn('[{"expiryTime": "soon"}, {"filename": 3}, null]')).toBeUndefined();
    expect(certificatesExpiryIn('{"expiryTime":"2026-12-13T10:00:00Z"}')).toBeUndefined();
    expect(certificatesExpiryIn(`[${'{"x":1},'.repeat(40_000)}{}]`)).toBeUndefined();
  });

  it('runs the check hourly and the rotation with the services as arguments, never inside the script', () => {
    expect(certificateCheckInstruction()).toMatchObject({
      name: 'certificate-expiry',
      periodSeconds: 3600,
      args: expect.arrayContaining(['certificate', 'check', '--output', 'json']),
    });
    const args = certificateRotateArgs(['admin', 'api-server']);
    expect(args.slice(-4)).toEqual(['--service', 'admin', '--service', 'api-server']);
    expect(args[1]).toContain('k3s certificate rotate "$@"');
  });
});
