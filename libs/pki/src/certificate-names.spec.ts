import { createCertificateAuthority } from './certificate-authority.js';
import { certificateNames } from './certificate-names.js';
import { issueServerCertificate } from './issue.js';

describe('certificateNames', () => {
  it('lists the DNS names and IP addresses of a serving certificate', async () => {
    const ca = await createCertificateAuthority({ commonName: 'test-ca' });
    const cert = await issueServerCertificate(ca, {
      commonName: 'webhook',
      dnsNames: ['webhook.capstan-system.svc'],
      ipAddresses: ['127.0.0.1'],
    });
    expect(certificateNames(cert.certPem)).toEqual({ dnsNames: ['webhook.capstan-system.svc'], ipAddresses: ['127.0.0.1'] });
    expect(certificateNames(ca.certPem)).toEqual({ dnsNames: [], ipAddresses: [] });
  });
});
