import type { Unstructured } from '../contract/unstructured.js';
import { storeConversionData } from './conversion-data.js';
import { durationToSeconds, secondsToDuration } from './durations.js';
import { compact, explicitZero, nonEmpty, numberOrUndefined, record, stringOrUndefined } from './fields.js';
import { healthCheckDown, healthCheckUp } from './machine-health-check.js';
import { rolloutUp, strategyDown } from './machine-deployment.js';
import { toContractReference, toObjectReference, type ApiVersionLookup } from './references.js';
import { statusBucketsDown, statusBucketsUp } from './status-buckets.js';

const TIMEOUTS = [
  ['nodeDrainTimeout', 'nodeDrainTimeoutSeconds'],
  ['nodeVolumeDetachTimeout', 'nodeVolumeDetachTimeoutSeconds'],
  ['nodeDeletionTimeout', 'nodeDeletionTimeoutSeconds'],
] as const;

const list = (value: unknown): unknown[] | undefined => (Array.isArray(value) ? value : undefined);

function timeoutsUp(obj: Unstructured, field: string): Unstructured {
  return Object.fromEntries(TIMEOUTS.map(([from, to]) => [to, durationToSeconds(stringOrUndefined(obj[from]), `${field}.${from}`)]));
}

function timeoutsDown(deletion: unknown): Unstructured {
  const d = record(deletion);
  return Object.fromEntries(TIMEOUTS.map(([to, from]) => [to, secondsToDuration(numberOrUndefined(d[from]))]));
}

/** v1beta1 variable values without `definitionFrom`, which v1beta2 drops as upstream does. */
const variablesUp = (variables: unknown): unknown[] | undefined =>
  list(variables)?.map((v) => {
    const { definitionFrom: _definitionFrom, ...rest } = record(v);
    return rest;
  });

/** The `variables` of the control plane or a worker topology: `overrides` without `definitionFrom`. */
function topologyVariablesUp(variables: unknown): Unstructured | undefined {
  if (variables === undefined) return undefined;
  const v = record(variables);
  return compact({ ...v, overrides: variablesUp(v['overrides']) });
}

/** A topology's `machineHealthCheck` (`enable` + the check) as v1beta2's `healthCheck`. */
function topologyHealthCheckUp(mhc: unknown, field: string, maxInFlight?: unknown): Unstructured | undefined {
  const check = record(mhc);
  const { checks, remediation } = healthCheckUp(check, field);
  return nonEmpty({
    enabled: check['enable'],
    checks,
    remediation: nonEmpty({ ...record(remediation), maxInFlight }),
  });
}

function topologyHealthCheckDown(healthCheck: unknown, namespace: string | undefined): Unstructured | undefined {
  const check = record(healthCheck);
  const remediation = record(check['remediation']);
  const { maxInFlight: _maxInFlight, ...rest } = remediation;
  return nonEmpty({ enable: check['enabled'], ...healthCheckDown({ ...check, remediation: rest }, namespace) });
}

function machineDeploymentTopologyUp(md1: unknown, field: string): Unstructured {
  const md = record(md1);
  const { rollout, deletion, remediation } = rolloutUp(md['strategy'], undefined);
  return compact({
    metadata: md['metadata'],
    class: md['class'],
    name: md['name'],
    replicas: md['replicas'],
    failureDomain: stringOrUndefined(md['failureDomain']),
    minReadySeconds: md['minReadySeconds'],
    readinessGates: md['readinessGates'],
    taints: md['taints'],
    rollout: nonEmpty({ ...record(rollout), ...record(md['rollout']) }),
    deletion: nonEmpty({ ...record(deletion), ...timeoutsUp(md, field) }),
    healthCheck: topologyHealthCheckUp(md['machineHealthCheck'], `${field}.machineHealthCheck`, record(remediation)['maxInFlight']),
    variables: topologyVariablesUp(md['variables']),
  });
}

function machineDeploymentTopologyDown(md2: unknown, namespace: string | undefined): Unstructured {
  const md = record(md2);
  const rollout = record(md['rollout']);
  const { strategy: _strategy, ...rolloutRest } = rollout;
  return compact({
    metadata: md['metadata'],
    class: md['class'],
    name: md['name'],
    replicas: md['replicas'],
    failureDomain: stringOrUndefined(md['failureDomain']),
    minReadySeconds: md['minReadySeconds'],
    readinessGates: md['readinessGates'],
    taints: md['taints'],
    rollout: nonEmpty(rolloutRest),
    strategy: strategyDown({
      rollout,
      deletion: md['deletion'],
      remediation: { maxInFlight: record(record(md['healthCheck'])['remediation'])['maxInFlight'] },
    }),
    ...timeoutsDown(md['deletion']),
    machineHealthCheck: topologyHealthCheckDown(md['healthCheck'], namespace),
    variables: md['variables'],
  });
}

function machinePoolTopologyUp(mp1: unknown, field: string): Unstructured {
  const mp = record(mp1);
  const { nodeDrainTimeout: _a, nodeVolumeDetachTimeout: _b, nodeDeletionTimeout: _c, ...rest } = mp;
  return compact({ ...rest, deletion: nonEmpty(timeoutsUp(mp, field)), variables: topologyVariablesUp(mp['variables']) });
}

function machinePoolTopologyDown(mp2: unknown): Unstructured {
  const { deletion, ...rest } = record(mp2);
  return compact({ ...rest, ...timeoutsDown(deletion) });
}

/** `spec.topology`: `class` + `classNamespace` become `classRef`; `rolloutAfter` and `definitionFrom` are dropped as upstream drops them. */
function topologyUp(topology1: unknown): Unstructured | undefined {
  if (topology1 === undefined) return undefined;
  const t = record(topology1);
  const cp = record(t['controlPlane']);
  const workers = record(t['workers']);
  const { nodeDrainTimeout: _a, nodeVolumeDetachTimeout: _b, nodeDeletionTimeout: _c, machineHealthCheck, ...cpRest } = cp;
  return compact({
    classRef: nonEmpty({ name: t['class'], namespace: stringOrUndefined(t['classNamespace']) }),
    version: t['version'],
    variables: variablesUp(t['variables']),
    controlPlane: nonEmpty({
      ...cpRest,
      variables: topologyVariablesUp(cpRest['variables']),
      deletion: nonEmpty(timeoutsUp(cp, 'spec.topology.controlPlane')),
      healthCheck: topologyHealthCheckUp(machineHealthCheck, 'spec.topology.controlPlane.machineHealthCheck'),
    }),
    workers: nonEmpty({
      machineDeployments: list(workers['machineDeployments'])?.map((md, i) =>
        machineDeploymentTopologyUp(md, `spec.topology.workers.machineDeployments[${i}]`),
      ),
      machinePools: list(workers['machinePools'])?.map((mp, i) => machinePoolTopologyUp(mp, `spec.topology.workers.machinePools[${i}]`)),
    }),
  });
}

function topologyDown(topology2: unknown, namespace: string | undefined): Unstructured | undefined {
  if (topology2 === undefined) return undefined;
  const t = record(topology2);
  const classRef = record(t['classRef']);
  const cp = record(t['controlPlane']);
  const workers = record(t['workers']);
  const { deletion, healthCheck, ...cpRest } = cp;
  return nonEmpty({
    class: classRef['name'],
    classNamespace: stringOrUndefined(classRef['namespace']),
    version: t['version'],
    variables: t['variables'],
    controlPlane: nonEmpty({
      ...cpRest,
      ...timeoutsDown(deletion),
      machineHealthCheck: topologyHealthCheckDown(healthCheck, namespace),
    }),
    workers: nonEmpty({
      machineDeployments: list(workers['machineDeployments'])?.map((md) => machineDeploymentTopologyDown(md, namespace)),
      machinePools: list(workers['machinePools'])?.map(machinePoolTopologyDown),
    }),
  });
}

/** v1beta1 `failureDomains` map -> the v1beta2 list, sorted by name, `controlPlane` always set. */
function failureDomainsUp(map: unknown): Unstructured[] | undefined {
  if (map === undefined) return undefined;
  return Object.keys(record(map))
    .sort()
    .map((name) => {
      const domain = record(record(map)[name]);
      return compact({ name, controlPlane: domain['controlPlane'] === true, attributes: domain['attributes'] });
    });
}

function failureDomainsDown(domains: unknown): Unstructured | undefined {
  const entries = list(domains);
  if (!entries) return undefined;
  return Object.fromEntries(
    entries.map((d) => {
      const domain = record(d);
      return [domain['name'], compact({ controlPlane: domain['controlPlane'] === true, attributes: domain['attributes'] })];
    }),
  );
}

export function clusterUp(c1: Unstructured, restored: Unstructured | undefined): Unstructured {
  const spec = record(c1['spec']);
  const status = record(c1['status']);
  const keptInit = record(record(restored?.['status'])['initialization']);
  const network = record(spec['clusterNetwork']);
  const { current, deprecated } = statusBucketsUp(status, ['failureReason', 'failureMessage'], { alwaysDeprecated: false });
  return compact({
    ...c1,
    spec: compact({
      paused: explicitZero<boolean>(spec['paused'], record(restored?.['spec'])['paused']),
      clusterNetwork: nonEmpty({
        apiServerPort: network['apiServerPort'],
        services: network['services'],
        pods: network['pods'],
        serviceDomain: network['serviceDomain'],
      }),
      controlPlaneEndpoint: spec['controlPlaneEndpoint'],
      controlPlaneRef: toContractReference(spec['controlPlaneRef'], 'spec.controlPlaneRef'),
      infrastructureRef: toContractReference(spec['infrastructureRef'], 'spec.infrastructureRef'),
      availabilityGates: spec['availabilityGates'],
      topology: topologyUp(spec['topology']),
    }),
    status: c1['status'] === undefined
      ? undefined
      : compact({
          conditions: current['conditions'],
          deprecated,
          initialization: nonEmpty({
            infrastructureProvisioned: explicitZero<boolean>(status['infrastructureReady'], keptInit['infrastructureProvisioned']),
            controlPlaneInitialized: explicitZero<boolean>(status['controlPlaneReady'], keptInit['controlPlaneInitialized']),
          }),
          controlPlane: current['controlPlane'],
          workers: current['workers'],
          failureDomains: failureDomainsUp(status['failureDomains']),
          phase: status['phase'],
          observedGeneration: status['observedGeneration'],
        }),
  });
}

export function clusterDown(c2: Unstructured, lookup: ApiVersionLookup): Unstructured {
  const namespace = stringOrUndefined(record(c2['metadata'])['namespace']);
  const spec = record(c2['spec']);
  const status = record(c2['status']);
  const init = record(status['initialization']);
  const network = record(spec['clusterNetwork']);
  const { old, v1beta2 } = statusBucketsDown(status, ['controlPlane', 'workers']);
  const c1 = compact({
    ...c2,
    spec: compact({
      paused: spec['paused'] === true,
      clusterNetwork: nonEmpty({
        // 0 means unset in v1beta2 and is left out, as upstream does.
        apiServerPort: network['apiServerPort'] === 0 ? undefined : network['apiServerPort'],
        services: network['services'],
        pods: network['pods'],
        serviceDomain: network['serviceDomain'],
      }),
      controlPlaneEndpoint: spec['controlPlaneEndpoint'],
      controlPlaneRef: toObjectReference(spec['controlPlaneRef'], namespace, lookup),
      infrastructureRef: toObjectReference(spec['infrastructureRef'], namespace, lookup),
      availabilityGates: spec['availabilityGates'],
      topology: topologyDown(spec['topology'], namespace),
    }),
    status: c2['status'] === undefined
      ? undefined
      : compact({
          ...old,
          v1beta2,
          infrastructureReady: init['infrastructureProvisioned'] === true,
          controlPlaneReady: init['controlPlaneInitialized'] === true,
          failureDomains: failureDomainsDown(status['failureDomains']),
          phase: status['phase'],
          observedGeneration: status['observedGeneration'],
        }),
  });
  storeConversionData(c2, c1);
  return c1;
}
