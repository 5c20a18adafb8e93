import type { KubernetesObject } from '@kubernetes/client-node';
import type { KubeClient } from '../client.js';
import { isAlreadyExists } from '../errors.js';
import type { ResourceType } from '../resource.js';

/** A small namespaced test kind with a status subresource, for the runtime's own tests and benchmark. */
export const WIDGET: ResourceType = {
  group: 'runtimetest.capstan.dev',
  version: 'v1',
  plural: 'widgets',
  kind: 'Widget',
  namespaced: true,
};

export interface Widget extends KubernetesObject {
  spec?: { size?: number; providerID?: string; note?: string };
  status?: { observedGeneration?: number; phase?: string; seen?: number; conditions?: unknown[] };
}

const CRD_RESOURCE: ResourceType = {
  group: 'apiextensions.k8s.io',
  version: 'v1',
  plural: 'customresourcedefinitions',
  kind: 'CustomResourceDefinition',
  namespaced: false,
};

interface Crd extends KubernetesObject {
  status?: { conditions?: { type: string; status: string }[] };
}

const openObject = { type: 'object', 'x-kubernetes-preserve-unknown-fields': true };

/** Creates the Widget CRD unless it exists, and waits until the API server serves it. */
export async function ensureWidgetCrd(client: KubeClient): Promise<void> {
  const crds = client.resource<Crd>(CRD_RESOURCE);
  const name = `${WIDGET.plural}.${WIDGET.group}`;
  try {
    await crds.create({
      metadata: { name },
      spec: {
        group: WIDGET.group,
        scope: 'Namespaced',
        names: { plural: WIDGET.plural, singular: 'widget', kind: WIDGET.kind, listKind: 'WidgetList' },
        versions: [
          {
            name: WIDGET.version,
            served: true,
            storage: true,
            subresources: { status: {} },
            schema: {
              openAPIV3Schema: {
                type: 'object',
                properties: {
                  spec: {
                    type: 'object',
                    properties: {
                      size: { type: 'integer' },
                      providerID: { type: 'string' },
                      note: { type: 'string' },
                    },
                  },
                  status: openObject,
                },
              },
            },
          },
        ],
      },
    } as Crd);
  } catch (err) {
    if (!isAlreadyExists(err)) throw err;
  }
  const deadline = Date.now() + 30_000;
  for (;;) {
    const crd = await crds.get({ name });
    if (crd.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True')) break;
    if (Date.now() > deadline) throw new Error(`CRD ${name} was not established within 30 s`);
    await new Promise((r) => setTimeout(r, 100));
  }
  // Established can precede the first successful list by a moment; wait until the collection answers.
  const widgets = client.resource(WIDGET);
  for (;;) {
    try {
      await widgets.list({ namespace: 'default', limit: 1 });
      return;
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

export function widget(
  namespace: string,
  name: string,
  spec: Widget['spec'] = {},
  labels?: Record<string, string>,
): Widget {
  return {
    apiVersion: `${WIDGET.group}/${WIDGET.version}`,
    kind: WIDGET.kind,
    metadata: { namespace, name, labels },
    spec,
  };
}
