import {
  clusterClassesAreCompatible,
  formatVersion,
  LABELS,
  parseTolerantVersion,
  RESOURCES,
  type Cluster,
  type ClusterClass,
  type Machine,
  type MachineDeployment,
  type SemanticVersion,
  type ValidationIssue,
} from '@capstan/api';
import { canonicalJson, type KubeClient } from '@capstan/kube';
import type { ProviderKinds } from '@capstan/provider-kit';
import { clusterClassKey, clusterClassReadiness, type ClusterClassKey } from '../reconcilers/topology/cluster-class-ref.js';
import { controlPlaneState } from '../reconcilers/topology/desired-state.js';
import type { TemplateObject } from '../reconcilers/topology/topology-blueprint.js';
import { pendingHooks } from '../reconcilers/topology/topology-hooks.js';
import { UPGRADE_CONCURRENCY_ANNOTATION } from '../reconcilers/topology/topology-upgrade.js';
import { checkVariables, variableDefinitions } from '../reconcilers/topology/topology-variables.js';
import type { AdmissionVerdict } from './admission-verdict.js';

// Upstream's Cluster validating webhook (core/webhooks/admission/cluster.go) for the rules that need the ClusterClass
// or the Cluster's objects; the CRD's CEL rules already refuse a malformed version and a removed topology. A cluster
// owner's topology is checked against its class (versions it allows, worker classes it defines, variables against
// its schemas), an upgrade against where the Cluster is (no downgrade, no minor skipped, none while the control plane
// or a MachineDeployment is still moving or AfterClusterUpgrade is pending), a new classRef against the old class.

/** Cluster annotation: skip the version checks of an update (upstream's escape hatch). */
export const UNSAFE_UPDATE_VERSION_ANNOTATION =
  'unsafe.topology.cluster.x-k8s.io/disable-update-version-check';
/** Cluster annotation: allow a topology to be added to an existing Cluster. */
export const UNSAFE_UPDATE_CLASS_NAME_ANNOTATION =
  'unsafe.topology.cluster.x-k8s.io/disable-update-class-name-check';

/** The API server gives the webhook 10 s; each read gets less so that an answer is always sent. */
const READ_TIMEOUT_MS = 3_000;

const TOPOLOGY = 'spec.topology';

export class ClusterAdmission {
  constructor(
    private readonly client: KubeClient,
    private readonly kinds: ProviderKinds,
  ) {}

  async review(cluster: Cluster, old: Cluster | undefined): Promise<AdmissionVerdict> {
    const issues: ValidationIssue[] = [];
    const warnings: string[] = [];
    const topology = cluster.spec?.topology;
    if (!topology) return { issues, warnings };
    issues.push(...concurrencyProblems(cluster));
    const annotations = cluster.metadata.annotations ?? {};
    if (old && !old.spec?.topology) {
      if (UNSAFE_UPDATE_CLASS_NAME_ANNOTATION in annotations) return { issues, warnings };
      issues.push({ path: `${TOPOLOGY}.classRef`, message: 'classRef cannot be set on an existing Cluster' });
      return { issues, warnings };
    }
    // What the class decides is read only when the topology changes: the core's own metadata writes (finalizers,
    // annotations, a Cluster being deleted) must never be refused because the class moved on since.
    if (
      old &&
      (cluster.metadata.deletionTimestamp || canonicalJson(old.spec?.topology) === canonicalJson(topology))
    )
      return { issues, warnings };

    const classKey = clusterClassKey(cluster)!;
    const clusterClass = await this.clusterClass(classKey);
    if (!clusterClass) {
      if (!old) {
        warnings.push(
          `Cluster refers to ClusterClass ${classKey.namespace}/${classKey.name}, but this ClusterClass does not exist. Cluster topology has not been fully validated. The ClusterClass must be created to reconcile the Cluster`,
        );
        return { issues, warnings };
      }
      issues.push({
        path: `${TOPOLOGY}.classRef`,
        message: `ClusterClass ${classKey.namespace}/${classKey.name} not found`,
      });
      return { issues, warnings };
    }
    if (!clusterClassReadiness(clusterClass).reconciled)
      warnings.push(
        `Cluster refers to ClusterClass ${classKey.namespace}/${classKey.name}, but this ClusterClass hasn't been successfully reconciled. Cluster topology has not been fully validated. Please take a look at the ClusterClass status`,
      );
    issues.push(...problemsAgainstClass(cluster, clusterClass));
    if (!old) return { issues, warnings };

    if (UNSAFE_UPDATE_VERSION_ANNOTATION in annotations)
      warnings.push(
        `Skipping version validation for Cluster because annotation "${UNSAFE_UPDATE_VERSION_ANNOTATION}" is set.`,
      );
    else issues.push(...(await this.versionUpdateProblems(cluster, old, clusterClass)));

    const oldKey = clusterClassKey(old)!;
    if (oldKey.namespace !== classKey.namespace || oldKey.name !== classKey.name) {
      const oldClass = await this.clusterClass(oldKey);
      if (!oldClass)
        issues.push({
          path: `${TOPOLOGY}.classRef`,
          message: `valid ClusterClass with name "${oldKey.namespace}/${oldKey.name}" could not be retrieved, change from class "${oldKey.namespace}/${oldKey.name}" to class "${classKey.namespace}/${classKey.name}" cannot be validated`,
        });
      // The old class need not be reconciled: rebasing away from a broken class is allowed.
      else issues.push(...clusterClassesAreCompatible(oldClass, clusterClass).map(inNewClass(classKey)));
    }
    return { issues, warnings };
  }

  /** Upstream's validateTopologyVersionUpdate. */
  private async versionUpdateProblems(
    cluster: Cluster,
    old: Cluster,
    clusterClass: ClusterClass,
  ): Promise<ValidationIssue[]> {
    const path = `${TOPOLOGY}.version`;
    const wanted = parseTolerantVersion(cluster.spec!.topology!.version);
    const current = parseTolerantVersion(old.spec!.topology!.version);
    if (!wanted || !current || sameVersion(wanted, current)) return [];
    if (compareCore(wanted, current) < 0)
      return [
        {
          path,
          message: `version cannot be decreased from "${formatVersion(current)}" to "${formatVersion(wanted)}"`,
        },
      ];
    // A class listing its versions (or planning upgrades through an extension) may take a Cluster over several minors.
    const planned =
      (clusterClass.spec.kubernetesVersions?.length ?? 0) > 0 ||
      !!clusterClass.spec.upgrade?.external?.generateUpgradePlanExtension;
    if (!planned && (wanted.major !== current.major || wanted.minor >= current.minor + 2))
      return [
        {
          path,
          message: `version cannot be increased from "${formatVersion(current)}" to "${formatVersion(wanted)}"`,
        },
      ];
    if (pendingHooks(cluster).has('AfterClusterUpgrade'))
      return [
        { path, message: 'version cannot be changed when the "AfterClusterUpgrade" hook is still blocking' },
      ];
    const moving = [
      ...(await this.controlPlaneMoving(old, current)),
      ...(await this.machineDeploymentsMoving(old, current)),
    ];
    return moving.length > 0 ? [{ path, message: `version cannot be changed: [${moving.join(', ')}]` }] : [];
  }

  private async controlPlaneMoving(old: Cluster, current: SemanticVersion): Promise<string[]> {
    const ref = old.spec?.controlPlaneRef;
    if (!ref?.name) return [];
    const type = await this.kinds.resourceOf(ref.apiGroup, ref.kind);
    const object = await this.client
      .resource<TemplateObject>(type)
      .getIfExists(
        { namespace: old.metadata.namespace!, name: ref.name },
        AbortSignal.timeout(READ_TIMEOUT_MS),
      );
    if (!object) return [];
    const state = controlPlaneState(object);
    const specVersion = parseTolerantVersion(state.version);
    if (!specVersion || !sameVersion(specVersion, current))
      return [
        `Cluster.spec.topology.version ${formatVersion(current)} was not propagated to control plane yet (control plane version ${state.version})`,
      ];
    if (state.statusVersion === undefined) return ['control plane is currently provisioning'];
    const statusVersion = parseTolerantVersion(state.statusVersion);
    if (statusVersion && compareCore(statusVersion, specVersion) < 0)
      return ['control plane is still completing a previous upgrade'];
    return [];
  }

  private async machineDeploymentsMoving(old: Cluster, current: SemanticVersion): Promise<string[]> {
    const namespace = old.metadata.namespace!;
    const labelSelector = `${LABELS.clusterName}=${old.metadata.name},${LABELS.topologyOwned}`;
    const signal = AbortSignal.timeout(READ_TIMEOUT_MS);
    const deployments = await this.client
      .resource<MachineDeployment>(RESOURCES.MachineDeployment)
      .listAll({ namespace, labelSelector, signal });
    if (deployments.items.length === 0) return [];
    const machines = await this.client
      .resource<Machine>(RESOURCES.Machine)
      .listAll({ namespace, labelSelector: `${LABELS.clusterName}=${old.metadata.name}`, signal });
    const upgrading = deployments.items
      .filter((md) => {
        const version = md.spec.template.spec.version;
        const parsed = version ? parseTolerantVersion(version) : undefined;
        if (!parsed || !sameVersion(parsed, current)) return true;
        return machines.items.some(
          (machine) =>
            machine.metadata.labels?.[LABELS.deploymentName] === md.metadata.name &&
            machine.spec.version !== version,
        );
      })
      .map((md) => md.metadata.name!);
    return upgrading.length > 0
      ? [`there are still MachineDeployments completing a previous upgrade: [${upgrading.join(', ')}]`]
      : [];
  }

  private clusterClass(key: ClusterClassKey): Promise<ClusterClass | undefined> {
    return this.client
      .resource<ClusterClass>(RESOURCES.ClusterClass)
      .getIfExists(key, AbortSignal.timeout(READ_TIMEOUT_MS));
  }
}

/** A compatibility problem is about the class the Cluster moves to: said so, since its path is the class's. */
const inNewClass =
  (key: ClusterClassKey) =>
  (issue: ValidationIssue): ValidationIssue => ({
    path: `${TOPOLOGY}.classRef`,
    message: `ClusterClass ${key.namespace}/${key.name} is not compatible: ${issue.path}: ${issue.message}`,
  });

function concurrencyProblems(cluster: Cluster): ValidationIssue[] {
  const value = cluster.metadata.annotations?.[UPGRADE_CONCURRENCY_ANNOTATION];
  if (value === undefined) return [];
  const path = `metadata.annotations[${UPGRADE_CONCURRENCY_ANNOTATION}]`;
  // Go's strconv.Atoi: an optional sign and decimal digits.
  if (!/^[+-]?[0-9]+$/.test(value)) return [{ path, message: 'could not parse the value of the annotation' }];
  return Number(value) < 1 ? [{ path, message: 'value cannot be less than 1' }] : [];
}

/** Upstream's ValidateClusterForClusterClass and the variables of DefaultAndValidateVariables. */
export function problemsAgainstClass(cluster: Cluster, clusterClass: ClusterClass): ValidationIssue[] {
  const topology = cluster.spec!.topology!;
  const issues: ValidationIssue[] = [];
  const versions = clusterClass.spec.kubernetesVersions ?? [];
  if (versions.length > 0 && !versions.includes(topology.version))
    issues.push({
      path: `${TOPOLOGY}.version`,
      message: 'version must match one of the versions defined in the ClusterClass',
    });
  for (const list of ['machineDeployments', 'machinePools'] as const) {
    const classes = new Set((clusterClass.spec.workers?.[list] ?? []).map((worker) => worker.class));
    const kind = list === 'machineDeployments' ? 'MachineDeployment' : 'MachinePool';
    const names = new Set<string>();
    (topology.workers?.[list] ?? []).forEach((worker, i) => {
      const path = `${TOPOLOGY}.workers.${list}[${i}]`;
      if (!classes.has(worker.class))
        issues.push({
          path: `${path}.class`,
          message: `${kind}Class with name "${worker.class}" does not exist in ClusterClass "${clusterClass.metadata.name}"`,
        });
      if (names.has(worker.name))
        issues.push({
          path: `${path}.name`,
          message: `name must be unique. ${kind} with name "${worker.name}" is defined more than once`,
        });
      names.add(worker.name);
    });
  }
  issues.push(...healthCheckProblems(cluster, clusterClass), ...autoscalerProblems(cluster, clusterClass));
  issues.push(...checkVariables(variableDefinitions(clusterClass), topology).issues);
  return issues;
}

/** Upstream's IsDefined of a health check: it says what to check or how to remediate. */
const defines = (healthCheck: { checks?: object; remediation?: object } | undefined): boolean =>
  [healthCheck?.checks, healthCheck?.remediation].some(
    (part) => part !== undefined && Object.keys(part).length > 0,
  );

/** Upstream's validateMachineHealthChecks, the parts that need the class (the CRD checks the numbers). */
function healthCheckProblems(cluster: Cluster, clusterClass: ClusterClass): ValidationIssue[] {
  const topology = cluster.spec!.topology!;
  const issues: ValidationIssue[] = [];
  const enabledWithout = (enabled: boolean | undefined) =>
    `cannot be set to ${String(enabled)} as healthCheck definition is not available in the Cluster topology or the ClusterClass`;
  const controlPlane = topology.controlPlane?.healthCheck;
  const path = `${TOPOLOGY}.controlPlane.healthCheck`;
  if (defines(controlPlane) && !clusterClass.spec.controlPlane.machineInfrastructure?.templateRef)
    issues.push({
      path,
      message: 'can be only set if spec.controlPlane.machineInfrastructure is set in ClusterClass',
    });
  if (
    controlPlane?.enabled === true &&
    !defines(controlPlane) &&
    !defines(clusterClass.spec.controlPlane.healthCheck)
  )
    issues.push({ path: `${path}.enable`, message: enabledWithout(controlPlane.enabled) });
  for (const md of topology.workers?.machineDeployments ?? []) {
    const workerClass = clusterClass.spec.workers?.machineDeployments?.find((c) => c.class === md.class);
    // A class the ClusterClass lacks is reported once, above.
    if (
      workerClass &&
      md.healthCheck?.enabled === true &&
      !defines(md.healthCheck) &&
      !defines(workerClass.healthCheck)
    )
      issues.push({
        path: `${TOPOLOGY}.workers.machineDeployments[name=${md.name}].healthCheck.enable`,
        message: enabledWithout(md.healthCheck.enabled),
      });
  }
  return issues;
}

/** The cluster autoscaler's node group size annotations: whoever sets them owns `replicas`. */
const AUTOSCALER_ANNOTATIONS = [
  'cluster.x-k8s.io/cluster-api-autoscaler-node-group-min-size',
  'cluster.x-k8s.io/cluster-api-autoscaler-node-group-max-size',
];

/** Upstream's validateAutoscalerAnnotationsForCluster: `replicas` and the autoscaler would fight over the count. */
function autoscalerProblems(cluster: Cluster, clusterClass: ClusterClass): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  const autoscaled = (annotations: Record<string, string> | undefined) =>
    AUTOSCALER_ANNOTATIONS.some((key) => annotations?.[key] !== undefined);
  const where = `for cluster "${cluster.metadata.name}" in namespace "${cluster.metadata.namespace}"`;
  for (const md of cluster.spec!.topology!.workers?.machineDeployments ?? []) {
    if (md.replicas === undefined) continue;
    const path = `${TOPOLOGY}.workers.machineDeployments[name=${md.name}].replicas`;
    if (autoscaled(md.metadata?.annotations))
      issues.push({
        path,
        message: `cannot be set ${where} if the same MachineDeploymentTopology has autoscaler annotations`,
      });
    const workerClass = clusterClass.spec.workers?.machineDeployments?.find((c) => c.class === md.class);
    if (autoscaled(workerClass?.metadata?.annotations))
      issues.push({
        path,
        message: `cannot be set ${where} if the source class "${md.class}" of this MachineDeploymentTopology has autoscaler annotations`,
      });
  }
  return issues;
}

/** Upstream compares these without pre-releases: major, minor and patch. */
const compareCore = (a: SemanticVersion, b: SemanticVersion) =>
  a.major - b.major || a.minor - b.minor || a.patch - b.patch;
/** Equal as semver prints them, build metadata included (v1.34.4+k3s1 and v1.34.4+k3s2 differ). */
const sameVersion = (a: SemanticVersion, b: SemanticVersion) => formatVersion(a) === formatVersion(b);
