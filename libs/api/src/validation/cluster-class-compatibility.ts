import { parseApiVersion } from '../constants/groups.js';
import type { ClusterClass } from '../types/cluster-class.js';
import type { ValidationIssue } from './validate.js';

// Whether a Cluster built from one ClusterClass can be rebased onto another (upstream's
// check.ClusterClassesAreCompatible): the objects the topology already made keep their API group and kind, so the
// new class must name templates of the same group and kind for the infrastructure cluster, the control plane, the
// control plane's machines and every worker class both classes define. Bootstrap templates and metadata may differ.

interface TemplateRefLike {
  apiVersion?: string;
  kind?: string;
}

function groupKindProblems(
  current: TemplateRefLike | undefined,
  desired: TemplateRefLike | undefined,
  path: string,
): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  const group = (ref: TemplateRefLike | undefined) =>
    ref?.apiVersion ? parseApiVersion(ref.apiVersion).group : '';
  const [currentGroup, desiredGroup] = [group(current), group(desired)];
  if (currentGroup !== desiredGroup)
    issues.push({
      path: `${path}.apiVersion`,
      message: `group of apiVersion cannot be changed from "${currentGroup}" to "${desiredGroup}" to prevent incompatible changes in the Clusters`,
    });
  const [currentKind, desiredKind] = [current?.kind ?? '', desired?.kind ?? ''];
  if (currentKind !== desiredKind)
    issues.push({
      path: `${path}.kind`,
      message: `kind cannot be changed from "${currentKind}" to "${desiredKind}" to prevent incompatible changes in the Clusters`,
    });
  return issues;
}

/** Problems of moving Clusters from class `current` to class `desired`; none when they are compatible. */
export function clusterClassesAreCompatible(current: ClusterClass, desired: ClusterClass): ValidationIssue[] {
  const issues = [
    ...groupKindProblems(
      current.spec?.infrastructure?.templateRef,
      desired.spec?.infrastructure?.templateRef,
      'spec.infrastructure.templateRef',
    ),
    ...groupKindProblems(
      current.spec?.controlPlane?.templateRef,
      desired.spec?.controlPlane?.templateRef,
      'spec.controlPlane.templateRef',
    ),
  ];
  const currentMachines = current.spec?.controlPlane?.machineInfrastructure?.templateRef;
  const desiredMachines = desired.spec?.controlPlane?.machineInfrastructure?.templateRef;
  if (currentMachines || desiredMachines)
    issues.push(
      ...groupKindProblems(
        currentMachines,
        desiredMachines,
        'spec.controlPlane.machineInfrastructure.templateRef',
      ),
    );
  for (const list of ['machineDeployments', 'machinePools'] as const) {
    const before = new Map((current.spec?.workers?.[list] ?? []).map((worker) => [worker.class, worker]));
    (desired.spec?.workers?.[list] ?? []).forEach((worker, i) => {
      const previous = before.get(worker.class);
      if (previous)
        issues.push(
          ...groupKindProblems(
            previous.infrastructure?.templateRef,
            worker.infrastructure?.templateRef,
            `spec.workers.${list}[${i}].infrastructure.templateRef`,
          ),
        );
    });
  }
  return issues;
}
