import { randomInt } from 'node:crypto';

/** Upstream's default `machineNaming.template`. */
export const DEFAULT_MACHINE_NAME_TEMPLATE = '{{ .machineSet.name }}-{{ .random }}';

/** Machine names (and the names of their infrastructure and bootstrap clones) stay DNS labels. */
const MAX_NAME_LENGTH = 63;
const RANDOM_LENGTH = 5;
/** apimachinery's rand.String alphabet: no vowels, no confusable digits. */
const ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';

/** A `machineNaming.template` that uses something other than `.cluster.name`, `.machineSet.name` and `.random`. */
export class MachineNameTemplateError extends Error {
  constructor(
    readonly template: string,
    detail: string,
  ) {
    super(`machineNaming.template ${JSON.stringify(template)}: ${detail}`);
    this.name = 'MachineNameTemplateError';
  }
}

export function randomSuffix(random: () => number = () => randomInt(ALPHABET.length)): string {
  let out = '';
  for (let i = 0; i < RANDOM_LENGTH; i++) out += ALPHABET[random()];
  return out;
}

/**
 * Renders a machine name template; names longer than 63 characters keep their random part at the end, as
 * upstream's MachineSetMachineNameGenerator does.
 */
export function renderMachineName(
  template: string | undefined,
  vars: { clusterName: string; machineSetName: string; random: string },
): string {
  const source = template ?? DEFAULT_MACHINE_NAME_TEMPLATE;
  if (!/\{\{\s*\.random\s*\}\}/.test(source))
    throw new MachineNameTemplateError(source, 'must contain {{ .random }}');
  const name = source.replace(/\{\{\s*([^}]*?)\s*\}\}/g, (_match, expression: string) => {
    switch (expression) {
      case '.cluster.name':
        return vars.clusterName;
      case '.machineSet.name':
        return vars.machineSetName;
      case '.random':
        return vars.random;
      default:
        throw new MachineNameTemplateError(source, `unknown expression {{ ${expression} }}`);
    }
  });
  if (name.length <= MAX_NAME_LENGTH) return name;
  return `${name.slice(0, MAX_NAME_LENGTH - vars.random.length)}${vars.random}`;
}
