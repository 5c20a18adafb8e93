import { CONTROL_PLANE_GROUP, RESOURCES } from '@capstan/api';
import { parseAllDocuments } from 'yaml';

/**
 * The rules `generate cluster` and `scale` check before anything reaches the API server, so a mistake is
 * refused with its rule instead of surfacing later as a provider error or a cluster that never becomes Available.
 */

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS_LABEL_MAX = 63;
const KUBERNETES_VERSION = /^v\d+\.\d+\.\d+(\+k3s\d+)?$/;

export const DNS_LABEL_RULE =
  'an RFC 1123 label: at most 63 characters, lower case letters, digits and "-", starting and ending with a letter or digit';

/** Upstream's rule for cluster names (they become label values and prefixes of other names), and for namespaces. */
export function dnsLabelProblem(what: string, value: string): string | undefined {
  if (value.length <= DNS_LABEL_MAX && DNS_LABEL.test(value)) return undefined;
  const detail = value.length > DNS_LABEL_MAX ? ` (it has ${value.length} characters)` : '';
  return `${what} "${value}" is not ${DNS_LABEL_RULE}${detail}`;
}

export function kubernetesVersionProblem(what: string, value: string): string | undefined {
  if (KUBERNETES_VERSION.test(value)) return undefined;
  return `${what} "${value}" is not a Kubernetes version: a semantic version vX.Y.Z, optionally with a K3s release +k3sN (e.g. v1.34.4 or v1.34.4+k3s1)`;
}

export function machineCountProblem(what: string, value: string): string | undefined {
  if (/^\d+$/.test(value)) return undefined;
  return `${what} must be a whole number of machines, 0 or more; got "${value}"`;
}

/** Whether a control plane kind runs etcd on its own machines: every K3sControlPlane does (K3s embedded etcd). */
export function hasEmbeddedEtcd(ref: { apiGroup?: string; kind?: string }): boolean {
  return ref.apiGroup === CONTROL_PLANE_GROUP && ref.kind === RESOURCES.K3sControlPlane.kind;
}

export const EMBEDDED_ETCD_RULE =
  'a K3s control plane runs embedded etcd and needs an odd number of machines (1, 3, 5, ...) for quorum: ' +
  'an even count tolerates no more failures than one machine fewer';

export function controlPlaneReplicasProblem(what: string, replicas: number): string | undefined {
  if (replicas % 2 === 1) return undefined;
  return `${what} is ${replicas}, but ${EMBEDDED_ETCD_RULE}`;
}

/** A whole number >= 0 for a count flag (commander's argument parser); anything else is refused with the rule. */
export function countArgument(flag: string): (value: string) => number {
  return (value) => {
    const problem = machineCountProblem(flag, value.trim());
    if (problem) throw new InvalidClusterError([problem]);
    return Number(value);
  };
}

/**
 * The user's input is wrong: every problem with its rule. The CLI prints it as one message and exits non-zero, the
 * dashboard answers 400 with the problems.
 */
export class InvalidClusterError extends Error {
  constructor(readonly problems: string[]) {
    super(problems.length === 1 ? problems[0] : `${problems.length} problems:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'InvalidClusterError';
  }
}

/** The template variables `generate cluster` resolved from flags and environment, checked before substitution. */
export function variableProblems(values: Readonly<Record<string, string | undefined>>): string[] {
  const problems: (string | undefined)[] = [];
  const name = values['CLUSTER_NAME'];
  if (name !== undefined) problems.push(dnsLabelProblem('cluster name', name));
  const namespace = values['NAMESPACE'];
  if (namespace !== undefined) problems.push(dnsLabelProblem('namespace (--target-namespace, NAMESPACE)', namespace));
  const version = values['KUBERNETES_VERSION'];
  if (version) problems.push(kubernetesVersionProblem('--kubernetes-version (KUBERNETES_VERSION)', version));
  for (const [variable, flag] of [
    ['CONTROL_PLANE_MACHINE_COUNT', '--control-plane-machine-count'],
    ['WORKER_MACHINE_COUNT', '--worker-machine-count'],
  ] as const) {
    const count = values[variable];
    if (count !== undefined) problems.push(machineCountProblem(`${flag} (${variable})`, count));
  }
  return problems.filter((p): p is string => p !== undefined);
}

/**
 * Checks the rendered objects for what only the template decides: a K3sControlPlane's replicas may come from
 * CONTROL_PLANE_MACHINE_COUNT or be written in a --from template.
 */
export function renderedProblems(yaml: string): string[] {
  const problems: string[] = [];
  for (const doc of parseAllDocuments(yaml)) {
    // A template that does not parse is the API server's to refuse, with its own message.
    if (doc.errors.length > 0) continue;
    const object = doc.toJS() as { apiVersion?: unknown; kind?: unknown; metadata?: { name?: unknown }; spec?: { replicas?: unknown } } | null;
    if (!object || typeof object.apiVersion !== 'string' || typeof object.kind !== 'string') continue;
    const apiGroup = object.apiVersion.split('/')[0];
    const replicas = object.spec?.replicas;
    if (!hasEmbeddedEtcd({ apiGroup, kind: object.kind }) || typeof replicas !== 'number') continue;
    const problem = controlPlaneReplicasProblem(
      `the control plane machine count (--control-plane-machine-count, CONTROL_PLANE_MACHINE_COUNT) of ${object.kind} ${String(object.metadata?.name)}`,
      replicas,
    );
    if (problem) problems.push(problem);
  }
  return problems;
}
