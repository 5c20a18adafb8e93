/**
 * Variable substitution in cluster templates, as clusterctl does it (drone/envsubst syntax):
 * `${VAR}`, `${VAR:=default}` / `${VAR:-default}` (default when unset or empty) and `${VAR=default}` /
 * `${VAR-default}` (default only when unset).
 */
const VARIABLE = /\$\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*(?:(:?[=-])([^}]*))?\}/g;

export interface TemplateVariable {
  name: string;
  /** The default written in the template, when it has one. */
  defaultValue?: string;
}

export class MissingVariablesError extends Error {
  constructor(readonly variables: string[]) {
    super(`value for variables [${variables.join(', ')}] is not set; set them as environment variables (or with the matching flags)`);
    this.name = 'MissingVariablesError';
  }
}

/** Every variable a template uses, in order of first use, with the default the template gives it. */
export function listVariables(template: string): TemplateVariable[] {
  const found = new Map<string, TemplateVariable>();
  for (const match of template.matchAll(VARIABLE)) {
    const name = match[1]!;
    const known = found.get(name);
    const defaultValue = match[2] ? match[3]!.trim() : undefined;
    if (!known) found.set(name, defaultValue === undefined ? { name } : { name, defaultValue });
    else if (known.defaultValue === undefined && defaultValue !== undefined) known.defaultValue = defaultValue;
  }
  return [...found.values()];
}

/** Replaces every variable; throws MissingVariablesError naming all variables that have neither value nor default. */
export function substitute(template: string, values: Readonly<Record<string, string | undefined>>): string {
  const missing = new Set<string>();
  const result = template.replace(VARIABLE, (_whole, name: string, operator: string | undefined, fallback: string | undefined) => {
    const value = values[name];
    const emptyCountsAsUnset = operator?.startsWith(':') ?? false;
    const unset = value === undefined || (emptyCountsAsUnset && value === '');
    if (!unset) return value;
    if (operator) return fallback!.trim();
    missing.add(name);
    return '';
  });
  if (missing.size > 0) throw new MissingVariablesError([...missing]);
  return result;
}
