import { randomInt } from 'node:crypto';
import { GoTemplateError, renderGoTemplate } from './go-template.js';
import { TopologyError } from './topology-errors.js';

// Names of the objects a topology creates, as upstream's internal/topology/names: a Go template over the cluster
// name, `.random` and the worker's topology name, or a prefix and five random characters; a name longer than 63
// characters is cut to 58 and given a random suffix.

const MAX_NAME_LENGTH = 63;
const RANDOM_LENGTH = 5;
const MAX_GENERATED_NAME_LENGTH = MAX_NAME_LENGTH - RANDOM_LENGTH;
/** Kubernetes' utilrand alphabet: no vowels (no words), no 0, 1 or 3 (no look-alikes). */
const ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';

export const DEFAULT_NAMING = {
  infrastructureCluster: '{{ .cluster.name }}-{{ .random }}',
  controlPlane: '{{ .cluster.name }}-{{ .random }}',
  machineDeployment: '{{ .cluster.name }}-{{ .machineDeployment.topologyName }}-{{ .random }}',
} as const;

export function randomSuffix(): string {
  let suffix = '';
  for (let i = 0; i < RANDOM_LENGTH; i++) suffix += ALPHABET[randomInt(ALPHABET.length)];
  return suffix;
}

/** `prefix` (cut to 58 characters) and five random characters: templates cloned for a class. */
export function nameWithPrefix(prefix: string): string {
  return `${prefix.slice(0, MAX_GENERATED_NAME_LENGTH)}${randomSuffix()}`;
}

/** A name from a class's naming template; a result that is not a valid object name is an error. */
export function nameFromTemplate(template: string, data: Record<string, unknown>, what: string): string {
  let name: string;
  try {
    // As upstream's generator: no sprig functions, and a key the data lacks is an error.
    name = renderGoTemplate(
      template,
      { ...data, random: randomSuffix() },
      { maxOutputBytes: 4096, sprig: false, missingKey: 'error', name: 'template name generator' },
    );
  } catch (error) {
    const reason = error instanceof GoTemplateError ? error.message : String(error);
    throw new TopologyError(`naming template of the ${what}: ${reason}`);
  }
  if (name.length > MAX_NAME_LENGTH) name = name.slice(0, MAX_GENERATED_NAME_LENGTH) + randomSuffix();
  if (!/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/.test(name))
    throw new TopologyError(
      `naming template of the ${what} gives "${name}", which is not a valid object name (lowercase letters, digits, '-' and '.')`,
    );
  return name;
}
