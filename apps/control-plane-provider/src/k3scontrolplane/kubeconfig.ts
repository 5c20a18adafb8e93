import { parseKubeconfig } from '@capstan/kube';
import {
  certificateNotBefore,
  CLOCK_SKEW_MS,
  expiresWithin,
  kubeconfigClientCertificate,
} from '@capstan/pki';

/** The admin certificate is issued for a year and replaced once it has 30 days left. */
export const KUBECONFIG_RENEW_BEFORE_MS = 30 * 24 * 60 * 60 * 1000;

/** Why `<cluster>-kubeconfig` must be (re)issued, or undefined while it is good. */
export function kubeconfigRenewalReason(
  existing: string | undefined,
  server: string,
  serverCaPem: string,
  now: Date,
  /** When the servers' certificates were last rotated: a kubeconfig issued before follows them. */
  rotatedAt?: Date,
): string | undefined {
  if (!existing) return 'missing';
  try {
    const current = parseKubeconfig(existing);
    if (current.server !== server) return 'endpoint changed';
    if (current.caPem !== serverCaPem) return 'server CA changed';
    if (expiresWithin(kubeconfigClientCertificate(existing), KUBECONFIG_RENEW_BEFORE_MS, now))
      return 'client certificate expires soon';
    // Issued certificates start CLOCK_SKEW_MS before they were issued.
    if (
      rotatedAt &&
      certificateNotBefore(kubeconfigClientCertificate(existing)).getTime() + CLOCK_SKEW_MS <
        rotatedAt.getTime()
    )
      return 'server certificates rotated';
    return undefined;
  } catch {
    return 'unreadable';
  }
}
