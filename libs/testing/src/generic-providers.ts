import { ApiextensionsV1Api, type KubeConfig, type V1CustomResourceDefinition } from '@kubernetes/client-node';

/**
 * Provider kinds with no controller behind them, as upstream's envtest builders have: tests of the core
 * set their status by hand to play the provider. Spec and status accept any field, so the same kinds
 * can speak the v1beta2 contract or the v1beta1 one.
 */
export const GENERIC_PROVIDER_GROUPS = {
  infrastructure: 'infrastructure.generic.capstan.dev',
  bootstrap: 'bootstrap.generic.capstan.dev',
  controlPlane: 'controlplane.generic.capstan.dev',
} as const;

export const GENERIC_PROVIDER_VERSION = 'v1beta2';

export interface GenericProviderKind {
  group: string;
  version: string;
  kind: string;
  plural: string;
}

const kinds = (group: string, names: string[]): GenericProviderKind[] =>
  names.map((kind) => ({ group, version: GENERIC_PROVIDER_VERSION, kind, plural: `${kind.toLowerCase()}s` }));

export const GENERIC_PROVIDER_KINDS: GenericProviderKind[] = [
  ...kinds(GENERIC_PROVIDER_GROUPS.infrastructure, [
    'GenericInfrastructureCluster',
    'GenericInfrastructureMachine',
    'GenericInfrastructureMachineTemplate',
  ]),
  ...kinds(GENERIC_PROVIDER_GROUPS.bootstrap, ['GenericBootstrapConfig', 'GenericBootstrapConfigTemplate']),
  ...kinds(GENERIC_PROVIDER_GROUPS.controlPlane, ['GenericControlPlane']),
];

export function genericProviderKind(kind: string): GenericProviderKind {
  const found = GENERIC_PROVIDER_KINDS.find((k) => k.kind === kind);
  if (!found) throw new Error(`unknown generic provider kind ${kind}`);
  return found;
}

function crdFor(k: GenericProviderKind): V1CustomResourceDefinition {
  // client-node serialises through its typed model, where the wire name x-kubernetes-preserve-unknown-fields
  // is spelled x_kubernetes_preserve_unknown_fields; any other spelling is silently dropped.
  const open = { type: 'object', x_kubernetes_preserve_unknown_fields: true };
  const isControlPlane = k.kind === 'GenericControlPlane';
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: {
      name: `${k.plural}.${k.group}`,
      // The contract label tells the core which API version of this kind speaks the v1beta2 contract.
      labels: { 'cluster.x-k8s.io/v1beta2': k.version },
    },
    spec: {
      group: k.group,
      scope: 'Namespaced',
      names: { kind: k.kind, plural: k.plural, singular: k.kind.toLowerCase(), listKind: `${k.kind}List`, categories: ['cluster-api'] },
      versions: [
        {
          name: k.version,
          served: true,
          storage: true,
          schema: { openAPIV3Schema: { type: 'object', properties: { spec: open, status: open } } },
          subresources: {
            status: {},
            ...(isControlPlane
              ? { scale: { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas', labelSelectorPath: '.status.selector' } }
              : {}),
          },
        },
      ],
    },
  };
}

export const GENERIC_PROVIDER_CRDS: V1CustomResourceDefinition[] = GENERIC_PROVIDER_KINDS.map(crdFor);

/** Installs the generic provider CRDs (idempotent) and waits until the API server serves them. */
export async function installGenericProviderCrds(kc: KubeConfig, timeoutMs = 30_000): Promise<void> {
  const api = kc.makeApiClient(ApiextensionsV1Api);
  for (const crd of GENERIC_PROVIDER_CRDS) {
    await api.createCustomResourceDefinition({ body: crd }).catch((error: { code?: number }) => {
      if (error.code !== 409) throw error;
    });
  }
  const deadline = Date.now() + timeoutMs;
  for (const crd of GENERIC_PROVIDER_CRDS) {
    for (;;) {
      const current = await api.readCustomResourceDefinition({ name: crd.metadata!.name! });
      if (current.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True')) break;
      if (Date.now() > deadline) throw new Error(`CRD ${crd.metadata!.name} was not established in time`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
}
