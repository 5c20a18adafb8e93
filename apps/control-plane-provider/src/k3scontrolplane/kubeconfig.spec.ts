import {
  generateClusterCertificates,
  issueAdminKubeconfig,
  loadCertificateAuthority,
  type ClusterCertificates,
} from '@capstan/pki';
import { KUBECONFIG_RENEW_BEFORE_MS, kubeconfigRenewalReason } from './kubeconfig.js';

describe('kubeconfigRenewalReason', () => {
  let certificates: ClusterCertificates;
  let kubeconfig: string;
  const now = new Date('2026-01-01T00:00:00Z');
  const server = 'https://10.0.0.1:6443';

  beforeAll(async () => {
    certificates = await generateClusterCertificates('demo');
    const clientCA = await loadCertificateAuthority(certificates.cca);
    kubeconfig = (
      await issueAdminKubeconfig({ serverCaPem: certificates.ca.certPem, clientCA }, 'demo', server, { now })
    ).kubeconfig;
  });

  it('keeps a kubeconfig for the same endpoint and CA until 30 days before its certificate expires', () => {
    expect(kubeconfigRenewalReason(kubeconfig, server, certificates.ca.certPem, now)).toBeUndefined();
    const notAfter = now.getTime() + 365 * 24 * 3600 * 1000;
    expect(
      kubeconfigRenewalReason(
        kubeconfig,
        server,
        certificates.ca.certPem,
        new Date(notAfter - KUBECONFIG_RENEW_BEFORE_MS - 86_400_000),
      ),
    ).toBeUndefined();
    expect(
      kubeconfigRenewalReason(
        kubeconfig,
        server,
        certificates.ca.certPem,
        new Date(notAfter - KUBECONFIG_RENEW_BEFORE_MS + 86_400_000),
      ),
    ).toBe('client certificate expires soon');
  });

  it('follows a certificate rotation that finished after it was issued, and only such a one', () => {
    const later = new Date(now.getTime() + 3600_000);
    expect(kubeconfigRenewalReason(kubeconfig, server, certificates.ca.certPem, later, later)).toBe(
      'server certificates rotated',
    );
    expect(kubeconfigRenewalReason(kubeconfig, server, certificates.ca.certPem, later, now)).toBeUndefined();
  });

  it('asks for a new one when missing, unreadable, or for another endpoint or CA', () => {
    expect(kubeconfigRenewalReason(undefined, server, certificates.ca.certPem, now)).toBe('missing');
    expect(kubeconfigRenewalReason('{not yaml', server, certificates.ca.certPem, now)).toBe('unreadable');
    expect(kubeconfigRenewalReason(kubeconfig, 'https://10.0.0.2:6443', certificates.ca.certPem, now)).toBe(
      'endpoint changed',
    );
    expect(kubeconfigRenewalReason(kubeconfig, server, certificates.cca.certPem, now)).toBe(
      'server CA changed',
    );
  });
});
