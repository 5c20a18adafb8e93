import { CLUSTER_API_GROUP } from '../constants/groups.js';
import { crdName } from '../constants/resources.js';
import { CONVERTERS } from '../conversion/convert.js';
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
    /** Kinds served in more than one version: the core's conversion webhook converts between them. */
    conversion?: CrdConversion;
    versions: {
      name: string;
      served: boolean;
      storage: boolean;
      deprecated?: boolean;
      deprecationWarning?: string;
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

export interface CrdConversion {
  strategy: 'Webhook';
  webhook: {
    conversionReviewVersions: ['v1'];
    clientConfig: {
      service?: { name: string; namespace: string; path: string; port: number };
      url?: string;
      caBundle?: string;
    };
  };
}

/**
 * Where the API server finds the core's conversion webhook in a deployed management cluster (deploy/services/core.yaml);
 * the core fills in the CA bundle, or replaces this with its URL when it runs outside the cluster.
 */
export const CONVERSION_WEBHOOK_SERVICE = {
  name: 'capstan-core-webhook',
  namespace: 'capstan-system',
  path: '/convert',
  port: 443,
} as const;

/** The version upstream still serves (deprecated) beside v1beta2 for the kinds that have conversions. */
export const DEPRECATED_CORE_VERSION = 'v1beta1';

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
  const subresources = {
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
  };
  const converted = resource.group === CLUSTER_API_GROUP && CONVERTERS[resource.kind] !== undefined;
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
      ...(converted && {
        conversion: {
          strategy: 'Webhook',
          webhook: { conversionReviewVersions: ['v1'], clientConfig: { service: { ...CONVERSION_WEBHOOK_SERVICE } } },
        },
      }),
      versions: [
        {
          name: resource.version,
          served: true,
          storage: true,
          additionalPrinterColumns: options.printerColumns.map((c) => ({ ...c })),
          schema: { openAPIV3Schema: ordered(objectSchema(root, [], ROOT_PROPERTIES)) },
          subresources,
        },
        ...(converted
          ? [
              {
                name: DEPRECATED_CORE_VERSION,
                served: true,
                storage: false,
                deprecated: true,
                deprecationWarning: `${resource.group}/${DEPRECATED_CORE_VERSION} ${resource.kind} is deprecated; use ${resource.apiVersion}`,
                additionalPrinterColumns: [],
                // Checked where it matters: the webhook validates what it converts into v1beta2 (the stored version).
                schema: {
                  openAPIV3Schema: {
                    type: 'object' as const,
                    properties: structuredClone(ROOT_PROPERTIES),
                    'x-kubernetes-preserve-unknown-fields': true,
                  },
                },
                // Copies: YAML output would otherwise share them through anchors.
                subresources: structuredClone(subresources),
              },
            ]
          : []),
      ],
    },
  };
}
