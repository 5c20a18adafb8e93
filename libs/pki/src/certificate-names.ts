import { parseCertificatePem } from './certificate-authority.js';
import { x509 } from './x509.js';

/** The DNS names and IP addresses a certificate's subjectAltName lists. */
export function certificateNames(certPem: string): { dnsNames: string[]; ipAddresses: string[] } {
  const san = parseCertificatePem(certPem).getExtension(x509.SubjectAlternativeNameExtension);
  const items = san?.names.items ?? [];
  return {
    dnsNames: items.filter((n) => n.type === 'dns').map((n) => n.value),
    ipAddresses: items.filter((n) => n.type === 'ip').map((n) => n.value),
  };
}
