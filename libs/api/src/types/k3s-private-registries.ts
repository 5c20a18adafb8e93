import { IsBoolean, IsOptional, IsString, Matches, MaxLength } from '../schema/class-validator.js';
import { Cel, Description, Nested, NestedMap } from '../schema/decorators.js';
import { IsStringMap } from '../schema/validators.js';
import { StringListField } from './fields.js';
import { LocalObjectReferenceSchema } from './ip-address-claim.js';

// K3s's registries.yaml (https://docs.k3s.io/installation/private-registry) in the shape of cluster-api-provider-rke2's
// RKE2ConfigSpec.privateRegistriesConfig (mirrors; configs with authSecret and tls.tlsConfigSecret), plus Rancher's
// inline caBundle. Credentials stay in Secrets of the K3sConfig's namespace; the bootstrap provider reads them when it
// renders (apps/bootstrap-provider/src/k3sconfig/registry-sources.ts).

/** Bounds that keep the rendered file small and the CEL cost of the key rules within the API server's budget. */
const LIMITS = {
  registries: 32,
  endpoints: 16,
  endpoint: 2048,
  rewrites: 32,
  rewrite: 512,
  pem: 65536,
} as const;

/** A registry as K3s names it: a host name or IPv4 address with an optional port, or `*` (every registry). */
export const REGISTRY_HOST =
  /^(\*|[A-Za-z0-9]([-A-Za-z0-9]*[A-Za-z0-9])?(\.[A-Za-z0-9]([-A-Za-z0-9]*[A-Za-z0-9])?)*(:[0-9]{1,5})?)$/;

/** An http(s) URL with a host, without credentials (those go in `configs`), and an optional path. */
export const REGISTRY_ENDPOINT = /^https?:\/\/[^\s/?#@]+(\/\S*)?$/;

const REGISTRY_MAP = {
  maxProperties: LIMITS.registries,
  keyMaxLength: 255,
  keyPattern: REGISTRY_HOST,
} as const;

@Description(
  'RegistryMirror is where containerd pulls the images of one registry from (K3s registries.yaml mirrors).',
)
export class RegistryMirrorSchema {
  @StringListField(
    'endpoint lists the mirror URLs (http or https) tried in order; the registry itself is tried last unless K3s runs with disable-default-registry-endpoint.',
    {
      maxItems: LIMITS.endpoints,
      itemMinLength: 1,
      itemMaxLength: LIMITS.endpoint,
      itemPattern: {
        pattern: REGISTRY_ENDPOINT,
        message: 'each endpoint must be an http:// or https:// URL with a host and no credentials',
      },
    },
  )
  endpoint?: string[];

  @Description(
    'rewrite maps a regular expression on the image name to its replacement (e.g. "^rancher/(.*)": "mirror/rancher-images/$1"), applied on mirror endpoints only.',
  )
  @IsOptional()
  @IsStringMap({ maxProperties: LIMITS.rewrites, valueMaxLength: LIMITS.rewrite })
  @Cel(
    `self.all(pattern, size(pattern) <= ${LIMITS.rewrite})`,
    `rewrite patterns must be at most ${LIMITS.rewrite} characters`,
  )
  rewrite?: Record<string, string>;
}
export type RegistryMirror = RegistryMirrorSchema;

@Description(
  'RegistryTLSConfig is how containerd verifies a registry and authenticates to it with a certificate.',
)
export class RegistryTLSConfigSchema {
  @Description(
    'tlsConfigSecret is a Secret (e.g. of type kubernetes.io/tls) with ca.crt, and tls.crt with tls.key for a client certificate.',
  )
  @IsOptional()
  @Nested(() => LocalObjectReferenceSchema)
  tlsConfigSecret?: LocalObjectReferenceSchema;

  @Description(
    "caBundle is the PEM bundle trusted for the registry (Rancher's caBundle); it takes precedence over ca.crt of tlsConfigSecret.",
  )
  @IsOptional()
  @IsString()
  @MaxLength(LIMITS.pem)
  @Matches(/-----BEGIN CERTIFICATE-----/, { message: 'caBundle must hold PEM certificates' })
  caBundle?: string;

  @Description("insecureSkipVerify does not verify the registry's certificate.")
  @IsOptional()
  @IsBoolean()
  insecureSkipVerify?: boolean;
}
export type RegistryTLSConfig = RegistryTLSConfigSchema;

@Description('RegistryConfig is how containerd talks to one registry (K3s registries.yaml configs).')
export class RegistryConfigSchema {
  @Description(
    'authSecret is a Secret with username and password (e.g. of type kubernetes.io/basic-auth), or identity-token.',
  )
  @IsOptional()
  @Nested(() => LocalObjectReferenceSchema)
  authSecret?: LocalObjectReferenceSchema;

  @Description('tls is the certificate material and verification for the registry.')
  @IsOptional()
  @Nested(() => RegistryTLSConfigSchema)
  tls?: RegistryTLSConfigSchema;
}
export type RegistryConfig = RegistryConfigSchema;

@Description(
  "PrivateRegistriesConfig is K3s's registries.yaml: registry mirrors, and credentials and TLS per registry.",
)
export class PrivateRegistriesConfigSchema {
  @Description('mirrors maps a registry (e.g. docker.io, or * for every registry) to its mirrors.')
  @IsOptional()
  @NestedMap(() => RegistryMirrorSchema, {
    ...REGISTRY_MAP,
    keyMessage: 'mirrors keys must be a registry host[:port] or *',
  })
  mirrors?: Record<string, RegistryMirrorSchema>;

  @Description(
    'configs maps a registry or mirror host[:port] (or * for every registry) to its credentials and TLS settings.',
  )
  @IsOptional()
  @NestedMap(() => RegistryConfigSchema, {
    ...REGISTRY_MAP,
    keyMessage: 'configs keys must be a registry host[:port] or *',
  })
  configs?: Record<string, RegistryConfigSchema>;
}
export type PrivateRegistriesConfig = PrivateRegistriesConfigSchema;
