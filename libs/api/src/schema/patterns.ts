/** Validation patterns shared by many fields (the ones upstream's kubebuilder markers use). */
export const PATTERNS = {
  /** DNS-1123 subdomain: object names. */
  objectName: /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/,
  /** Fully qualified API group. */
  apiGroup: /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/,
  kind: /^[a-zA-Z]([-a-zA-Z0-9]*[a-zA-Z0-9])?$/,
  /** `group/version` with a fully qualified group, e.g. `infrastructure.cluster.x-k8s.io/v1beta2`. */
  apiVersion: /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/[a-z]([-a-z0-9]*[a-z0-9])?$/,
  /** metav1.Condition type: CamelCase, optionally prefixed with a DNS subdomain. */
  conditionType:
    /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$/,
  /** metav1.Condition reason: CamelCase. */
  conditionReason: /^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$/,
  /** A Kubernetes release as K3s names it: v1.31.4, or v1.31.4+k3s1 (the bootstrap renderer checks the same). */
  kubernetesVersion: /^v\d+\.\d+\.\d+(-[0-9A-Za-z.]+)?(\+[0-9A-Za-z.]+)?$/,
  /** `[min-max]`, e.g. `[3-5]`. */
  unhealthyRange: /^\[[0-9]+-[0-9]+\]$/,
} as const;
