import type { ReportedCondition } from '../conditions/conditions.js';
import type { APIEndpoint, StatusVersion } from '../types/common.js';
import type { ContractVersion } from './contract-version.js';
import { readConditions, readEndpoint } from './shared-fields.js';
import { arrayAt, booleanAt, integerAt, isRecord, stringAt } from './unstructured.js';

/** What the core reads from a ControlPlane (e.g. K3sControlPlane). Counters are undefined when not reported. */
export interface ControlPlaneContract {
  /** v1beta2 `status.initialization.controlPlaneInitialized`; v1beta1 `status.initialized` (or `status.ready`). */
  initialized: boolean;
  /** `spec.controlPlaneEndpoint`, when the control plane provides the endpoint. */
  controlPlaneEndpoint?: APIEndpoint;
  /** `spec.replicas`: the desired number of control plane machines. */
  desiredReplicas?: number;
  /** `status.selector`, for the scale subresource. */
  selector?: string;
  replicas?: number;
  readyReplicas?: number;
  /** v1beta2 `status.availableReplicas`; v1beta1 `spec.replicas - status.unavailableReplicas`. */
  availableReplicas?: number;
  /** v1beta2 `status.upToDateReplicas`; v1beta1 `status.updatedReplicas`. */
  upToDateReplicas?: number;
  /** `spec.version`: the desired Kubernetes version. */
  version?: string;
  /** `status.version`: the oldest version running (deprecated by v1beta2 in favour of `versions`). */
  statusVersion?: string;
  /** `status.versions` (v1beta2, Cluster API 1.14+). */
  versions?: StatusVersion[];
  externalManagedControlPlane?: boolean;
  conditions: ReportedCondition[];
}

function pick<T>(
  contract: ContractVersion | undefined,
  v1beta2: T | undefined,
  v1beta1: T | undefined,
): T | undefined {
  return contract === 'v1beta2' ? v1beta2 : contract === 'v1beta1' ? v1beta1 : (v1beta2 ?? v1beta1);
}

function readVersions(obj: unknown): StatusVersion[] | undefined {
  const list = arrayAt(obj, ['status', 'versions']);
  if (!list) return undefined;
  return list
    .filter(isRecord)
    .filter((v) => typeof v['version'] === 'string')
    .map((v) => ({
      version: v['version'] as string,
      ...(Number.isInteger(v['replicas']) ? { replicas: v['replicas'] as number } : {}),
    }));
}

export function readControlPlane(obj: unknown, contract?: ContractVersion): ControlPlaneContract {
  const initializedV1beta1 = booleanAt(obj, ['status', 'initialized']) ?? booleanAt(obj, ['status', 'ready']);
  const initialized = pick(
    contract,
    booleanAt(obj, ['status', 'initialization', 'controlPlaneInitialized']),
    initializedV1beta1,
  );
  const desiredReplicas = integerAt(obj, ['spec', 'replicas']);
  const unavailable = integerAt(obj, ['status', 'unavailableReplicas']);
  // Upstream computes v1beta1 availability from the desired count, treating a missing unavailableReplicas as 0.
  const availableV1beta1 = desiredReplicas === undefined ? undefined : desiredReplicas - (unavailable ?? 0);
  return {
    initialized: initialized === true,
    controlPlaneEndpoint: readEndpoint(obj),
    desiredReplicas,
    selector: stringAt(obj, ['status', 'selector']),
    replicas: integerAt(obj, ['status', 'replicas']),
    readyReplicas: integerAt(obj, ['status', 'readyReplicas']),
    availableReplicas: pick(contract, integerAt(obj, ['status', 'availableReplicas']), availableV1beta1),
    upToDateReplicas: pick(
      contract,
      integerAt(obj, ['status', 'upToDateReplicas']),
      integerAt(obj, ['status', 'updatedReplicas']),
    ),
    version: stringAt(obj, ['spec', 'version']),
    statusVersion: stringAt(obj, ['status', 'version']),
    versions: readVersions(obj),
    externalManagedControlPlane: booleanAt(obj, ['status', 'externalManagedControlPlane']),
    conditions: readConditions(obj, contract),
  };
}
