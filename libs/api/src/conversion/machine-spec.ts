import type { Unstructured } from '../contract/unstructured.js';
import { durationToSeconds, secondsToDuration } from './durations.js';
import { compact, nonEmpty, numberOrUndefined, record, stringOrUndefined } from './fields.js';
import { toContractReference, toObjectReference, type ApiVersionLookup } from './references.js';

const DELETION_TIMEOUTS = [
  ['nodeDrainTimeout', 'nodeDrainTimeoutSeconds'],
  ['nodeVolumeDetachTimeout', 'nodeVolumeDetachTimeoutSeconds'],
  ['nodeDeletionTimeout', 'nodeDeletionTimeoutSeconds'],
] as const;

/** A v1beta1 MachineSpec (a Machine's, or a template's) as v1beta2 has it; `minReadySeconds` is the caller's. */
export function machineSpecUp(spec1: unknown, field: string): Unstructured {
  const spec = record(spec1);
  const bootstrap = record(spec['bootstrap']);
  const deletion = nonEmpty(
    Object.fromEntries(
      DELETION_TIMEOUTS.map(([from, to]) => [
        to,
        durationToSeconds(stringOrUndefined(spec[from]), `${field}.${from}`),
      ]),
    ),
  );
  return compact({
    clusterName: spec['clusterName'],
    bootstrap: compact({
      configRef: toContractReference(bootstrap['configRef'], `${field}.bootstrap.configRef`),
      dataSecretName: bootstrap['dataSecretName'],
    }),
    infrastructureRef: toContractReference(spec['infrastructureRef'] ?? {}, `${field}.infrastructureRef`),
    version: stringOrUndefined(spec['version']),
    providerID: stringOrUndefined(spec['providerID']),
    failureDomain: stringOrUndefined(spec['failureDomain']),
    readinessGates: spec['readinessGates'],
    taints: spec['taints'],
    deletion,
  });
}

/** A v1beta2 MachineSpec as v1beta1 has it: references get their apiVersion and the owner's namespace. */
export function machineSpecDown(spec2: unknown, namespace: string | undefined, lookup: ApiVersionLookup): Unstructured {
  const spec = record(spec2);
  const bootstrap = record(spec['bootstrap']);
  const deletion = record(spec['deletion']);
  return compact({
    clusterName: spec['clusterName'],
    bootstrap: compact({
      configRef: toObjectReference(bootstrap['configRef'], namespace, lookup),
      dataSecretName: bootstrap['dataSecretName'],
    }),
    infrastructureRef: toObjectReference(spec['infrastructureRef'], namespace, lookup) ?? {},
    version: stringOrUndefined(spec['version']),
    providerID: stringOrUndefined(spec['providerID']),
    failureDomain: stringOrUndefined(spec['failureDomain']),
    readinessGates: spec['readinessGates'],
    taints: spec['taints'],
    ...Object.fromEntries(DELETION_TIMEOUTS.map(([to, from]) => [to, secondsToDuration(numberOrUndefined(deletion[from]))])),
  });
}

/** `template: {metadata, spec}` of a MachineSet or MachineDeployment, up; `minReadySeconds` moves into the spec. */
export function machineTemplateUp(template1: unknown, minReadySeconds: number | undefined, field: string): Unstructured {
  const template = record(template1);
  return compact({
    metadata: template['metadata'],
    spec: compact({ ...machineSpecUp(template['spec'], `${field}.spec`), minReadySeconds }),
  });
}

export function machineTemplateDown(template2: unknown, namespace: string | undefined, lookup: ApiVersionLookup): Unstructured {
  const template = record(template2);
  return compact({ metadata: template['metadata'], spec: machineSpecDown(template['spec'], namespace, lookup) });
}
