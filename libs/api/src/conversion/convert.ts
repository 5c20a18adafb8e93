import { CLUSTER_API_GROUP } from '../constants/groups.js';
import { isRecord, type Unstructured } from '../contract/unstructured.js';
import { clusterDown, clusterUp } from './cluster.js';
import { takeConversionData } from './conversion-data.js';
import { ConversionError } from './conversion-error.js';
import { machineDeploymentDown, machineDeploymentUp } from './machine-deployment.js';
import { machineHealthCheckDown, machineHealthCheckUp } from './machine-health-check.js';
import { machineSetDown, machineSetUp } from './machine-set.js';
import { machineDown, machineUp } from './machine.js';
import type { ApiVersionLookup } from './references.js';

export const V1BETA1 = `${CLUSTER_API_GROUP}/v1beta1`;
export const V1BETA2 = `${CLUSTER_API_GROUP}/v1beta2`;

interface KindConverter {
  /** v1beta1 -> v1beta2 (the hub), with what the conversion-data annotation kept. */
  up(obj: Unstructured, restored: Unstructured | undefined): Unstructured;
  /** v1beta2 -> v1beta1; writes the annotation where upstream does. */
  down(obj: Unstructured, lookup: ApiVersionLookup): Unstructured;
}

/** The core kinds served as v1beta1 and v1beta2, converted as upstream converts them (docs/upstream-conversion.md). */
export const CONVERTERS: Readonly<Record<string, KindConverter>> = {
  Cluster: { up: clusterUp, down: clusterDown },
  Machine: { up: machineUp, down: machineDown },
  MachineSet: { up: (obj) => machineSetUp(obj), down: machineSetDown },
  MachineDeployment: { up: machineDeploymentUp, down: machineDeploymentDown },
  MachineHealthCheck: { up: machineHealthCheckUp, down: (obj) => machineHealthCheckDown(obj) },
};

/** One object into `desiredApiVersion`; the input is not changed. */
export function convertObject(obj: unknown, desiredApiVersion: string, lookup: ApiVersionLookup): Unstructured {
  if (!isRecord(obj)) throw new ConversionError('is not an object', 'object');
  const kind = typeof obj['kind'] === 'string' ? obj['kind'] : '';
  const from = typeof obj['apiVersion'] === 'string' ? obj['apiVersion'] : '';
  const converter = CONVERTERS[kind];
  if (!converter) throw new ConversionError(`kind ${JSON.stringify(kind)} is not converted here`, 'kind');
  if (from === desiredApiVersion) return structuredClone(obj);
  const copy = structuredClone(obj);
  if (from === V1BETA1 && desiredApiVersion === V1BETA2) {
    const restored = kind === 'MachineSet' ? undefined : takeConversionData(copy);
    return { ...converter.up(copy, restored), apiVersion: desiredApiVersion };
  }
  if (from === V1BETA2 && desiredApiVersion === V1BETA1) {
    return { ...converter.down(copy, lookup), apiVersion: desiredApiVersion };
  }
  throw new ConversionError(`cannot convert ${kind} from ${from || '(none)'} to ${desiredApiVersion}`, 'apiVersion');
}
