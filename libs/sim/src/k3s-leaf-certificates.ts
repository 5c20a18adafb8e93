import { K3S_CERTIFICATE_SERVICES, type K3sCertificateService } from '@capstan/api';
import { K3S_CA_FILES, K3S_SERVER_TLS_DIR, type K3sServerTls } from '@capstan/k3s-bootstrap';
import { HostRoot, readBeneath, writeBeneath } from '@capstan/node-agent';
import {
  issueClientCertificate,
  issueServerCertificate,
  LEAF_VALIDITY_MS,
  loadCertificateAuthority,
  ONE_DAY_MS,
  parseCertificatePem,
  type CertificateAuthority,
} from '@capstan/pki';
import { SimError } from './errors.js';

// A K3s server's leaf certificates, by K3s's own file names under /var/lib/rancher/k3s/server/tls on the machine: what
// `k3s certificate check` reports and `k3s certificate rotate` renews (docs/day2.md). K3s issues them from the
// cluster's CAs at start, for a year; the sim issues them when the server boots and when a plan rotates them.

/**
 * The `k3s certificate rotate --service` names the sim's servers keep certificates for. The others K3s knows (etcd,
 * kubelet, kube-proxy, k3s-controller, ...) belong to parts the sim runs without certificates of their own: naming
 * them is accepted and renews nothing.
 */
export const SIM_CERTIFICATE_SERVICES = [
  'admin',
  'api-server',
  'controller-manager',
  'scheduler',
  'auth-proxy',
] as const satisfies readonly K3sCertificateService[];
type SimCertificateService = (typeof SIM_CERTIFICATE_SERVICES)[number];

type SigningCA = 'serverCA' | 'clientCA' | 'requestHeaderCA';

interface LeafCertificate {
  service: SimCertificateService;
  /** File name without `.crt` / `.key`, in K3S_SERVER_TLS_DIR. */
  stem: string;
  ca: SigningCA;
  usage: 'server' | 'client';
  commonName: string;
  organizations?: readonly string[];
}

const LEAVES: readonly LeafCertificate[] = [
  {
    service: 'admin',
    stem: 'client-admin',
    ca: 'clientCA',
    usage: 'client',
    commonName: 'system:admin',
    organizations: ['system:masters'],
  },
  {
    service: 'api-server',
    stem: 'serving-kube-apiserver',
    ca: 'serverCA',
    usage: 'server',
    commonName: 'kube-apiserver',
  },
  // What plan probes of the API server present (system:masters, as K3s's own apiserver client).
  {
    service: 'api-server',
    stem: 'client-kube-apiserver',
    ca: 'clientCA',
    usage: 'client',
    commonName: 'system:apiserver',
    organizations: ['system:masters'],
  },
  {
    service: 'controller-manager',
    stem: 'client-controller',
    ca: 'clientCA',
    usage: 'client',
    commonName: 'system:kube-controller-manager',
  },
  {
    service: 'scheduler',
    stem: 'client-scheduler',
    ca: 'clientCA',
    usage: 'client',
    commonName: 'system:kube-scheduler',
  },
  {
    service: 'auth-proxy',
    stem: 'client-auth-proxy',
    ca: 'requestHeaderCA',
    usage: 'client',
    commonName: 'system:auth-proxy',
  },
];

/** A CA or leaf certificate file is small; anything larger is not one K3s wrote. */
const MAX_PEM_BYTES = 64 * 1024;

export const leafCertificatePath = (stem: string): string => `${K3S_SERVER_TLS_DIR}/${stem}.crt`;
const leafKeyPath = (stem: string): string => `${K3S_SERVER_TLS_DIR}/${stem}.key`;

export interface LeafIssueOptions {
  /** The serving certificate's names (its SANs): the endpoint, `tls-san`, the kubernetes Service, localhost. */
  servingNames: { dnsNames: string[]; ipAddresses: string[] };
  /** Only these services' certificates; all when unset. */
  services?: readonly K3sCertificateService[];
  /**
   * Issue them as if `issuedDaysAgo` days had passed since (the sim's CAPSTAN_SIM_CERTIFICATE_AGE_DAYS on first boot):
   * a year-old server's certificates, so that rotation can be exercised without waiting a year. 0: now.
   */
  issuedDaysAgo?: number;
  now?: Date;
}

/** One certificate as `k3s certificate check --output json` lists it. */
export interface LeafCertificateReport {
  filename: string;
  service: SimCertificateService;
  subject: string;
  usages: 'ServerAuth' | 'ClientAuth';
  /** RFC 3339. */
  expiryTime: string;
  residualTime: string;
  status: 'OK' | 'WARNING' | 'EXPIRED';
}

/** K3s warns about (and renews at start) certificates within this many days of expiry. */
export const K3S_RENEWAL_WINDOW_DAYS = 120;

/**
 * Issues the server's leaf certificates from the cluster CAs on the machine (the bootstrap data wrote them there),
 * replacing any there: K3s's start for a new server, `k3s certificate rotate` for a running one. Returns the
 * services it renewed. The CA files are the cluster owner's, so they are read bounded and without following links.
 */
export async function issueLeafCertificates(
  root: string,
  options: LeafIssueOptions,
): Promise<K3sCertificateService[]> {
  const machine = new HostRoot(root);
  const services = new Set<K3sCertificateService>(options.services ?? SIM_CERTIFICATE_SERVICES);
  const leaves = LEAVES.filter((leaf) => services.has(leaf.service));
  const authorities = new Map<SigningCA, CertificateAuthority>();
  for (const ca of new Set(leaves.map((leaf) => leaf.ca))) authorities.set(ca, await machineCA(machine, ca));
  const now = options.now ?? new Date();
  const issuedAt = new Date(now.getTime() - (options.issuedDaysAgo ?? 0) * ONE_DAY_MS);
  for (const leaf of leaves) {
    const ca = authorities.get(leaf.ca)!;
    const request = {
      commonName: leaf.commonName,
      ...(leaf.organizations && { organizations: leaf.organizations }),
      validityMs: LEAF_VALIDITY_MS,
      now: issuedAt,
    };
    const issued =
      leaf.usage === 'server'
        ? await issueServerCertificate(ca, { ...request, ...options.servingNames })
        : await issueClientCertificate(ca, request);
    // The key first: a reader never pairs a new certificate with the old key.
    writeBeneath(machine, leafKeyPath(leaf.stem), issued.keyPem, 0o600);
    writeBeneath(machine, leafCertificatePath(leaf.stem), issued.certPem, 0o644);
  }
  return [...new Set(leaves.map((leaf) => leaf.service))];
}

async function machineCA(machine: HostRoot, ca: SigningCA): Promise<CertificateAuthority> {
  const stem = K3S_CA_FILES[ca satisfies keyof K3sServerTls].stem;
  try {
    return await loadCertificateAuthority(
      {
        certPem: readBeneath(machine, `${stem}.crt`, MAX_PEM_BYTES).toString('utf8'),
        keyPem: readBeneath(machine, `${stem}.key`, MAX_PEM_BYTES).toString('utf8'),
      },
      `${stem}.crt`,
    );
  } catch (error) {
    throw new SimError(
      `the server's ${stem}.crt and .key cannot sign certificates: ${(error as Error).message.slice(0, 200)}`,
      'InvalidServerTls',
    );
  }
}

/** The server's leaf certificates and when each expires; a file that is missing or not a certificate is left out. */
export function checkLeafCertificates(root: string, now: Date = new Date()): LeafCertificateReport[] {
  const machine = new HostRoot(root);
  const reports: LeafCertificateReport[] = [];
  for (const leaf of LEAVES) {
    let notAfter: Date;
    let subject: string;
    try {
      const certificate = parseCertificatePem(
        readBeneath(machine, leafCertificatePath(leaf.stem), MAX_PEM_BYTES).toString('utf8'),
      );
      notAfter = certificate.notAfter;
      subject = certificate.subject;
    } catch {
      continue;
    }
    const residualMs = notAfter.getTime() - now.getTime();
    reports.push({
      filename: leafCertificatePath(leaf.stem),
      service: leaf.service,
      subject,
      usages: leaf.usage === 'server' ? 'ServerAuth' : 'ClientAuth',
      expiryTime: notAfter.toISOString(),
      residualTime: `${Math.floor(residualMs / ONE_DAY_MS)}d`,
      status:
        residualMs <= 0 ? 'EXPIRED' : residualMs <= K3S_RENEWAL_WINDOW_DAYS * ONE_DAY_MS ? 'WARNING' : 'OK',
    });
  }
  return reports;
}

/** A `--service` value of `k3s certificate rotate`: known, or refused by name. */
export function isCertificateService(value: string): value is K3sCertificateService {
  return (K3S_CERTIFICATE_SERVICES as readonly string[]).includes(value);
}
