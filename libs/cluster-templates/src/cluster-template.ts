import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { k3sRelease } from '@capstan/k3s-bootstrap';
import { listVariables, substitute, type TemplateVariable } from '@capstan/manifests';
import { InvalidClusterError, renderedProblems, variableProblems } from './validate.js';

export interface GenerateClusterOptions {
  clusterName: string;
  infrastructure: string;
  flavor?: string;
  targetNamespace?: string;
  kubernetesVersion?: string;
  controlPlaneMachineCount?: number;
  workerMachineCount?: number;
  /** Template text given with --from (a file's content or stdin); the built-in template otherwise. */
  templateText?: string;
  env: Readonly<Record<string, string | undefined>>;
}

export class UnknownTemplateError extends Error {
  constructor(infrastructure: string, flavor: string | undefined, available: string[]) {
    super(
      `no cluster template for infrastructure "${infrastructure}"${flavor ? ` and flavor "${flavor}"` : ''}; ` +
        `available: ${available.join(', ') || 'none'}`,
    );
    this.name = 'UnknownTemplateError';
  }
}

/** Templates ship with this library (the CLI and the dashboard use them), named as clusterctl names them: cluster-template-<infrastructure>[-<flavor>].yaml. */
export function templatesDir(): string {
  return join(dirname(fileURLToPath(import.meta.url)), '..', 'templates');
}

/** A built-in template: `cluster-template-<infrastructure>[-<flavor>].yaml`. */
export interface BuiltInTemplate {
  infrastructure: string;
  flavor?: string;
}

/** The built-in templates, as `--infrastructure` and `--flavor` name them. */
export function builtInTemplates(): BuiltInTemplate[] {
  return readdirSync(templatesDir())
    .map((file) => /^cluster-template-([a-z0-9]+)(?:-([a-z0-9-]+))?\.yaml$/.exec(file))
    .filter((match): match is RegExpExecArray => match !== null)
    .map(([, infrastructure, flavor]) => ({ infrastructure: infrastructure!, ...(flavor ? { flavor } : {}) }))
    // The plain template of an infrastructure first, then its flavors by name.
    .sort((a, b) => a.infrastructure.localeCompare(b.infrastructure) || (a.flavor ?? '').localeCompare(b.flavor ?? ''));
}

export function builtInTemplate(infrastructure: string, flavor?: string): string {
  const file = `cluster-template-${infrastructure}${flavor ? `-${flavor}` : ''}.yaml`;
  const path = join(templatesDir(), file);
  if (!existsSync(path)) {
    const available = builtInTemplates().map((t) => `${t.infrastructure}${t.flavor ? `-${t.flavor}` : ''}`);
    throw new UnknownTemplateError(infrastructure, flavor, available);
  }
  return readFileSync(path, 'utf8');
}

/** Flags win over the environment, as in clusterctl. */
function variables(options: GenerateClusterOptions): Record<string, string | undefined> {
  const values: Record<string, string | undefined> = { ...options.env, CLUSTER_NAME: options.clusterName };
  if (options.targetNamespace) values['NAMESPACE'] = options.targetNamespace;
  values['NAMESPACE'] ??= 'default';
  if (options.kubernetesVersion) values['KUBERNETES_VERSION'] = options.kubernetesVersion;
  if (options.controlPlaneMachineCount !== undefined) {
    values['CONTROL_PLANE_MACHINE_COUNT'] = String(options.controlPlaneMachineCount);
  }
  values['CONTROL_PLANE_MACHINE_COUNT'] ??= '1';
  if (options.workerMachineCount !== undefined) values['WORKER_MACHINE_COUNT'] = String(options.workerMachineCount);
  values['WORKER_MACHINE_COUNT'] ??= '0';
  return values;
}

/** Renders the template; refuses (InvalidClusterError) what the API server or a provider would refuse later. */
export function generateCluster(options: GenerateClusterOptions): string {
  const template = options.templateText ?? builtInTemplate(options.infrastructure, options.flavor);
  const values = variables(options);
  // Only what the template uses: an unrelated KUBERNETES_VERSION in the environment is no reason to refuse.
  const used = new Set(listVariables(template).map((v) => v.name));
  const invalid = variableProblems(Object.fromEntries(Object.entries(values).filter(([name]) => used.has(name))));
  if (invalid.length > 0) throw new InvalidClusterError(invalid);
  // The built-in templates are K3s clusters: their version is a K3s release (a template of one's own is left alone).
  if (options.templateText === undefined && values['KUBERNETES_VERSION']) {
    values['KUBERNETES_VERSION'] = k3sRelease(values['KUBERNETES_VERSION']);
  }
  const rendered = substitute(template, values);
  const refused = renderedProblems(rendered);
  if (refused.length > 0) throw new InvalidClusterError(refused);
  return rendered;
}

export interface TemplateVariables {
  required: TemplateVariable[];
  optional: TemplateVariable[];
}

/** What `--list-variables` prints: the variables without a default are required. */
export function templateVariables(options: Pick<GenerateClusterOptions, 'infrastructure' | 'flavor' | 'templateText'>): TemplateVariables {
  const all = listVariables(options.templateText ?? builtInTemplate(options.infrastructure, options.flavor));
  return {
    required: all.filter((v) => v.defaultValue === undefined),
    optional: all.filter((v) => v.defaultValue !== undefined),
  };
}
