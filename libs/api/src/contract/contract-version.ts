import { contractLabelKey } from '../constants/labels.js';

/** Cluster API provider contract versions Capstan speaks. */
export type ContractVersion = 'v1beta2' | 'v1beta1';

/** The contract the core implements. */
export const CURRENT_CONTRACT: ContractVersion = 'v1beta2';

/** Contracts a core of the given contract can work with, newest first (upstream GetCompatibleVersions). */
export const COMPATIBLE_CONTRACTS: Record<ContractVersion, readonly ContractVersion[]> = {
  v1beta2: ['v1beta2', 'v1beta1'],
  v1beta1: ['v1beta1'],
};

/** A provider CRD without a usable contract label. */
export class ContractLabelError extends Error {
  constructor(
    readonly crdName: string,
    readonly contract: ContractVersion,
  ) {
    super(
      `CRD ${crdName} has no ${COMPATIBLE_CONTRACTS[contract].map(contractLabelKey).join(' or ')} label naming its API versions`,
    );
    this.name = 'ContractLabelError';
  }
}

const KUBE_VERSION = /^v(\d+)(?:(alpha|beta)(\d+))?$/;
const STABILITY = { alpha: 0, beta: 1, ga: 2 } as const;

/**
 * Orders API versions the way Kubernetes prioritises them (v1 > v1beta2 > v1beta1 > v1alpha1 > foo1 > foo10):
 * positive when `a` is newer than `b`.
 */
export function compareKubeVersions(a: string, b: string): number {
  const ma = KUBE_VERSION.exec(a);
  const mb = KUBE_VERSION.exec(b);
  if (!ma || !mb) {
    if (ma) return 1;
    if (mb) return -1;
    // Kubernetes ranks non-conforming versions alphabetically, the first one highest.
    return a < b ? 1 : a > b ? -1 : 0;
  }
  const stability = (m: RegExpExecArray) => STABILITY[(m[2] as 'alpha' | 'beta' | undefined) ?? 'ga'];
  return (
    stability(ma) - stability(mb) || Number(ma[1]) - Number(mb[1]) || Number(ma[3] ?? 0) - Number(mb[3] ?? 0)
  );
}

/** Which contract a provider speaks and which of its API versions to use for it. */
export interface ProviderContract {
  contract: ContractVersion;
  /** API version (e.g. `v1alpha1`) of the provider's group to read and write. */
  version: string;
}

/**
 * Reads the contract labels of a provider CRD (`cluster.x-k8s.io/<contract>: <versions joined by _>`) and picks
 * the newest compatible contract and the newest API version it lists (upstream
 * GetLatestContractAndAPIVersionFromContract).
 */
export function contractFromCrd(
  crd: { metadata?: { name?: string; labels?: Record<string, string> } },
  current: ContractVersion = CURRENT_CONTRACT,
): ProviderContract {
  const labels = crd.metadata?.labels ?? {};
  for (const contract of COMPATIBLE_CONTRACTS[current]) {
    const versions = (labels[contractLabelKey(contract)] ?? '').split('_').filter((v) => v !== '');
    if (versions.length === 0) continue;
    const newest = versions.reduce((best, v) => (compareKubeVersions(v, best) > 0 ? v : best));
    return { contract, version: newest };
  }
  throw new ContractLabelError(crd.metadata?.name ?? '(unnamed)', current);
}
