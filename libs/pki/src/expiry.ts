import { parseCertificatePem } from './certificate-authority.js';

/** When the first certificate of a PEM bundle stops being valid. */
export function certificateNotAfter(certPem: string): Date {
  return parseCertificatePem(certPem).notAfter;
}

/** When the first certificate of a PEM bundle started being valid. */
export function certificateNotBefore(certPem: string): Date {
  return parseCertificatePem(certPem).notBefore;
}

/**
 * True when the certificate expires within `withinMs` of `now` (or has already expired): the renewal
 * check, e.g. `expiresWithin(kubeconfigCert, 180 * ONE_DAY_MS)` renews half-way through a one-year cert.
 */
export function expiresWithin(certPem: string, withinMs: number, now: Date = new Date()): boolean {
  return certificateNotAfter(certPem).getTime() - now.getTime() <= withinMs;
}
