// Certificate rotation of K3s servers (docs/day2.md): the services `k3s certificate rotate --service` takes, and the
// lifetime K3s gives leaf certificates.

/** K3s's `certificate rotate --service` names (k3s-io/docs docs/cli/certificate.md). */
export const K3S_CERTIFICATE_SERVICES = [
  'admin',
  'api-server',
  'controller-manager',
  'scheduler',
  'k3s-controller',
  'k3s-server',
  'cloud-controller',
  'etcd',
  'auth-proxy',
  'kubelet',
  'kube-proxy',
] as const;
export type K3sCertificateService = (typeof K3S_CERTIFICATE_SERVICES)[number];

/** K3s issues leaf certificates for a year (`CATTLE_NEW_SIGNED_CERT_EXPIRATION_DAYS` unset). */
export const K3S_LEAF_CERTIFICATE_DAYS = 365;
