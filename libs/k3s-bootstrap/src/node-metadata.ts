/** Parsing of K3s `node-label` / `node-taint` entries, shared by the renderer (validation) and the parser. */

export type TaintEffect = 'NoSchedule' | 'PreferNoSchedule' | 'NoExecute';

export interface NodeTaint {
  key: string;
  value?: string;
  effect: TaintEffect;
}

const NAME = /^[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const EFFECTS: readonly string[] = ['NoSchedule', 'PreferNoSchedule', 'NoExecute'];

/** A qualified Kubernetes label / taint key: `[prefix/]name`, prefix a DNS subdomain of at most 253 characters. */
export function isQualifiedName(key: string): boolean {
  const slash = key.indexOf('/');
  if (slash === -1) return NAME.test(key);
  const prefix = key.slice(0, slash);
  return prefix.length <= 253 && DNS_SUBDOMAIN.test(prefix) && NAME.test(key.slice(slash + 1));
}

export function isLabelValue(value: string): boolean {
  return value === '' || NAME.test(value);
}

/** `key=value` as K3s's `node-label` takes it; undefined when malformed. */
export function parseNodeLabel(entry: string): { key: string; value: string } | undefined {
  const equals = entry.indexOf('=');
  if (equals === -1) return undefined;
  const key = entry.slice(0, equals);
  const value = entry.slice(equals + 1);
  return isQualifiedName(key) && isLabelValue(value) ? { key, value } : undefined;
}

/** `key=value:Effect` or `key:Effect` as K3s's `node-taint` takes it; undefined when malformed. */
export function parseNodeTaint(entry: string): NodeTaint | undefined {
  const colon = entry.lastIndexOf(':');
  if (colon === -1) return undefined;
  const effect = entry.slice(colon + 1);
  if (!EFFECTS.includes(effect)) return undefined;
  const keyValue = entry.slice(0, colon);
  const equals = keyValue.indexOf('=');
  const key = equals === -1 ? keyValue : keyValue.slice(0, equals);
  const value = equals === -1 ? undefined : keyValue.slice(equals + 1);
  if (!isQualifiedName(key) || (value !== undefined && !isLabelValue(value))) return undefined;
  return value === undefined
    ? { key, effect: effect as TaintEffect }
    : { key, value, effect: effect as TaintEffect };
}
