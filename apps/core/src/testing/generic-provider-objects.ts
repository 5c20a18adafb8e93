import { type KubernetesObject } from '@kubernetes/client-node';
import { type KubeClient } from '@capstan/kube';
import { genericProviderKind } from '@capstan/testing';
import { resourceOf } from './workload-env.js';

// What the Cluster and Machine controller tests write as the providers (the generic provider kinds of libs/testing).

export type GenericProviderObject = KubernetesObject & { spec?: object; status?: object };

/** A provider object's spec, status (written through the status subresource) and extra metadata. */
export interface ProviderSetup {
  spec?: object;
  status?: object;
  metadata?: object;
}

/** Creates a generic provider object as its provider would leave it. */
export async function createGenericProvider(
  client: KubeClient,
  namespace: string,
  kind: string,
  name: string,
  setup: ProviderSetup = {},
): Promise<void> {
  const { group, version } = genericProviderKind(kind);
  const objects = client.resource<GenericProviderObject>(resourceOf(kind));
  await objects.create({
    apiVersion: `${group}/${version}`,
    kind,
    metadata: { name, namespace, ...setup.metadata },
    spec: setup.spec ?? {},
  } as GenericProviderObject);
  if (setup.status) await objects.patchStatus({ namespace, name }, setup.status);
}

/** What the core says of a reference to a generic kind no CRD serves. */
export function noCrdMessage(kind: string, group: string): string {
  return `no CustomResourceDefinition serves kind ${kind} in API group ${group}.generic.capstan.dev`;
}
