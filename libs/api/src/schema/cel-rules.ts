// CEL rules shared by several kinds. Messages name the field so `kubectl apply` errors say what to fix.

/** On an int-or-string: a non-negative integer or a percentage such as `25%`. */
export const CEL_INT_OR_PERCENT = "type(self) == int ? self >= 0 : self.matches('^[0-9]+%$')";

/** On a spec with a providerID: it is fixed once the provider set it. */
export const PROVIDER_ID_FIXED_RULE =
  '!has(oldSelf.providerID) || (has(self.providerID) && self.providerID == oldSelf.providerID)';

/** On a template kind's spec: templates are replaced, not edited, so rollouts see the change. */
export const TEMPLATE_SPEC_IMMUTABLE_RULE = 'self.template.spec == oldSelf.template.spec';
export const TEMPLATE_SPEC_IMMUTABLE_MESSAGE =
  'spec.template.spec is immutable: create a new template and reference it instead';

/** On a spec with a clusterName: objects never move between clusters. */
export const CLUSTER_NAME_IMMUTABLE_RULE = 'self.clusterName == oldSelf.clusterName';
