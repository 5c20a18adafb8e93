import type { LabelSelector } from '@capstan/api';

// metav1.LabelSelector semantics (apimachinery labels.Selector): matchLabels and matchExpressions are ANDed, an
// empty selector matches every object.

/** Whether `labels` satisfy every requirement of `selector`. */
export function selectorMatches(
  selector: LabelSelector,
  labels: Readonly<Record<string, string>> | undefined,
): boolean {
  const have = labels ?? {};
  for (const [key, value] of Object.entries(selector.matchLabels ?? {})) {
    if (have[key] !== value) return false;
  }
  for (const requirement of selector.matchExpressions ?? []) {
    const present = Object.hasOwn(have, requirement.key);
    const values = requirement.values ?? [];
    switch (requirement.operator) {
      case 'In':
        if (!present || !values.includes(have[requirement.key]!)) return false;
        break;
      case 'NotIn':
        if (present && values.includes(have[requirement.key]!)) return false;
        break;
      case 'Exists':
        if (!present) return false;
        break;
      case 'DoesNotExist':
        if (present) return false;
        break;
    }
  }
  return true;
}

/**
 * The selector in the string form kubectl and the scale subresource use (`a=b,c in (d,e),!f`), requirements sorted
 * by key as apimachinery prints them.
 */
export function selectorToString(selector: LabelSelector): string {
  const requirements: { key: string; text: string }[] = [];
  for (const [key, value] of Object.entries(selector.matchLabels ?? {})) {
    requirements.push({ key, text: `${key}=${value}` });
  }
  for (const { key, operator, values } of selector.matchExpressions ?? []) {
    const list = [...(values ?? [])].sort().join(',');
    const text =
      operator === 'In'
        ? `${key} in (${list})`
        : operator === 'NotIn'
          ? `${key} notin (${list})`
          : operator === 'Exists'
            ? key
            : `!${key}`;
    requirements.push({ key, text });
  }
  return requirements
    .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
    .map((r) => r.text)
    .join(',');
}

/**
 * `status.selector` for the scale subresource. An empty selector renders as "", which the CRD refuses
 * (upstream's defaulting webhook never lets a selector be empty); then the field is left out, so the
 * rest of the status is still written.
 */
export function statusSelector(selector: LabelSelector): { selector?: string } {
  const text = selectorToString(selector);
  return text ? { selector: text } : {};
}
