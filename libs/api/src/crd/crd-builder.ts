import { crdName } from '../constants/resources.js';
import { type SchemaClass, customResourceOf } from '../schema/metadata.js';
import { type JsonSchema, ordered } from './json-schema.js';
import { SchemaDefinitionError, objectSchema } from './schema-builder.js';

/** A CustomResourceDefinition as applied to the API server (wire field names). */
export interface CustomResourceDefinition {
  apiVersion: 'apiextensions.k8s.io/v1';
  kind: 'CustomResourceDefinition';
  metadata: { name: string; labels: Record<string, string> };
  spec: {
    group: string;
    names: {
      kind: string;
      listKind: string;
      plural: string;
      singular: string;
      shortNames: string[];
      categories: string[];
    };
    scope: 'Namespaced' | 'Cluster';
    versions: {
      name: string;
      served: boolean;
      storage: boolean;
      additionalPrinterColumns: {
        name: string;
        type: string;
        jsonPath: string;
        description: string;
        priority?: number;
      }[];
      schema: { openAPIV3Schema: JsonSchema };
      subresources: {
        status: Record<string, never>;
        scale?: { specReplicasPath: string; statusReplicasPath: string; labelSelectorPath: string };
      };
    }[];
  };
}

const ROOT_PROPERTIES: Record<string, JsonSchema> = {
  apiVersion: {
    description:
      'APIVersion defines the versioned schema of this representation of an object. Servers should convert recognized schemas to the latest internal value, and may reject unrecognized values.',
    type: 'string',
  },
  kind: {
    description:
      'Kind is a string value representing the REST resource this object represents. Servers may infer this from the endpoint the client submits requests to. In CamelCase.',
    type: 'string',
  },
  metadata: { type: 'object' },
};

/** The CRD of a root class decorated with `@CustomResource`. */
export function buildCrd(root: SchemaClass): CustomResourceDefinition {
  const options = customResourceOf(root);
  if (!options) throw new SchemaDefinitionError(root.name, undefined, 'not a @CustomResource');
  const { resource } = options;
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: crdName(resource), labels: { ...options.labels } },
    spec: {
      group: resource.group,
      names: {
        kind: resource.kind,
        listKind: resource.listKind,
        plural: resource.plural,
        singular: resource.singular,
        shortNames: [...options.shortNames],
        categories: [...(options.categories ?? ['cluster-api'])],
      },
      scope: resource.namespaced ? 'Namespaced' : 'Cluster',
      versions: [
        {
          name: resource.version,
          served: true,
          storage: true,
          additionalPrinterColumns: options.printerColumns.map((c) => ({ ...c })),
          schema: { openAPIV3Schema: ordered(objectSchema(root, [], ROOT_PROPERTIES)) },
          subresources: {
            status: {},
            ...(options.scale
              ? {
                  scale: {
                    specReplicasPath: '.spec.replicas',
                    statusReplicasPath: '.status.replicas',
                    labelSelectorPath: '.status.selector',
                  },
                }
              : {}),
          },
        },
      ],
    },
  };
}
