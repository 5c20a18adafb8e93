import { stringify } from 'yaml';
import { BootstrapRenderError } from './errors.js';
import type { K3sRegistries, K3sRegistryConfig } from './k3s-config-spec.js';
import { K3S_REGISTRIES_PATH, K3S_REGISTRY_TLS_DIR } from './paths.js';
import { CERT_PERMISSIONS, KEY_PERMISSIONS, type TlsFile } from './server-tls-files.js';
import { YAML_OPTIONS } from './yaml-options.js';

// K3s's registries.yaml (https://docs.k3s.io/installation/private-registry) and the certificate files it names,
// rendered the way Rancher's planner renders them (rancher/rancher pkg/capr/planner/registry.go): the same files go
// into the bootstrap data and into every in-place plan, so a change or a removal reaches running machines too.

/** The API field the errors name: the renderer's `registries` is K3sConfig `spec.privateRegistriesConfig`. */
const FIELD = 'spec.privateRegistriesConfig';

/** A registry host[:port], or `*`: it is also a directory name, so never a path. */
const REGISTRY = /^(\*|[A-Za-z0-9]([-A-Za-z0-9.]*[A-Za-z0-9])?(:[0-9]{1,5})?)$/;
const CERTIFICATE_PEM = '-----BEGIN CERTIFICATE-----';
const PRIVATE_KEY_PEM = /-----BEGIN [A-Z ]*PRIVATE KEY-----/;

const invalid = (field: string, what: string) =>
  new BootstrapRenderError(`${field} ${what}`, 'InvalidField', field);

const sorted = <T>(map: Readonly<Record<string, T>> | undefined): [string, T][] =>
  Object.entries(map ?? {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));

function isMirrorEndpoint(text: string): boolean {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return false;
  }
  return (
    (url.protocol === 'https:' || url.protocol === 'http:') &&
    url.hostname !== '' &&
    url.username === '' &&
    url.password === '' &&
    !/\s/.test(text)
  );
}

function validateConfig(config: K3sRegistryConfig, field: string): void {
  const { auth, tls } = config;
  if (auth) {
    const basic = auth.username !== undefined || auth.password !== undefined;
    if (basic && !(auth.username && auth.password))
      throw invalid(`${field}.auth`, 'needs both username and password');
    if (!basic && !auth.identityToken)
      throw invalid(`${field}.auth`, 'needs username and password, or an identity token');
  }
  if (!tls) return;
  if (tls.caPem !== undefined && !tls.caPem.includes(CERTIFICATE_PEM))
    throw invalid(`${field}.tls.ca`, 'is not a PEM certificate');
  if ((tls.certPem === undefined) !== (tls.keyPem === undefined))
    throw invalid(`${field}.tls`, 'needs the client certificate and its key together');
  if (tls.certPem !== undefined && !tls.certPem.includes(CERTIFICATE_PEM))
    throw invalid(`${field}.tls.cert`, 'is not a PEM certificate');
  if (tls.keyPem !== undefined && !PRIVATE_KEY_PEM.test(tls.keyPem))
    throw invalid(`${field}.tls.key`, 'is not a PEM private key');
}

/** Checks what goes into registries.yaml; errors name the registry and the field, never a credential. */
export function validateRegistries(registries: K3sRegistries): void {
  for (const [registry, mirror] of sorted(registries.mirrors)) {
    const field = `${FIELD}.mirrors[${registry}]`;
    if (!REGISTRY.test(registry)) throw invalid(field, 'is not a registry host[:port] or *');
    (mirror.endpoint ?? []).forEach((endpoint, index) => {
      if (!isMirrorEndpoint(endpoint))
        throw invalid(`${field}.endpoint[${index}]`, 'is not an http(s) URL with a host and no credentials');
    });
    if (Object.keys(mirror.rewrite ?? {}).some((pattern) => pattern === ''))
      throw invalid(`${field}.rewrite`, 'has an empty pattern');
  }
  for (const [registry, config] of sorted(registries.configs)) {
    const field = `${FIELD}.configs[${registry}]`;
    if (!REGISTRY.test(registry)) throw invalid(field, 'is not a registry host[:port] or *');
    validateConfig(config, field);
  }
}

/** The directory of one registry's certificate files; `*` as a directory name would trip every shell glob. */
export function registryTlsDir(registry: string): string {
  return `${K3S_REGISTRY_TLS_DIR}/${registry === '*' ? '_wildcard' : registry}`;
}

/** Whether the registries files own `path`: registries.yaml, or a registry's certificate file. */
export function isRegistriesPath(path: string): boolean {
  return path === K3S_REGISTRIES_PATH || path.startsWith(`${K3S_REGISTRY_TLS_DIR}/`);
}

/**
 * registries.yaml (root-only: it holds credentials) then each registry's certificate files (keys root-only), registries
 * and keys sorted, so a re-render is byte-identical. Expects input validateRegistries accepted.
 */
export function registriesFiles(registries: K3sRegistries): TlsFile[] {
  const certificateFiles: TlsFile[] = [];
  const configs: Record<string, unknown> = {};
  for (const [registry, { auth, tls }] of sorted(registries.configs)) {
    const entry: Record<string, unknown> = {};
    if (auth) {
      entry['auth'] = {
        ...(auth.username !== undefined && { username: auth.username, password: auth.password }),
        ...(auth.identityToken !== undefined && { identity_token: auth.identityToken }),
      };
    }
    if (tls) {
      const dir = registryTlsDir(registry);
      const tlsEntry: Record<string, unknown> = {};
      const file = (key: string, name: string, permissions: string, content: string | undefined) => {
        if (content === undefined) return;
        certificateFiles.push({ path: `${dir}/${name}`, permissions, content });
        tlsEntry[key] = `${dir}/${name}`;
      };
      file('ca_file', 'ca.crt', CERT_PERMISSIONS, tls.caPem);
      file('cert_file', 'tls.crt', CERT_PERMISSIONS, tls.certPem);
      file('key_file', 'tls.key', KEY_PERMISSIONS, tls.keyPem);
      if (tls.insecureSkipVerify !== undefined) tlsEntry['insecure_skip_verify'] = tls.insecureSkipVerify;
      entry['tls'] = tlsEntry;
    }
    configs[registry] = entry;
  }
  const mirrors = Object.fromEntries(
    sorted(registries.mirrors).map(([registry, mirror]) => [
      registry,
      {
        ...(mirror.endpoint && { endpoint: [...mirror.endpoint] }),
        ...(mirror.rewrite && { rewrite: Object.fromEntries(sorted(mirror.rewrite)) }),
      },
    ]),
  );
  const document = {
    ...(Object.keys(mirrors).length > 0 && { mirrors }),
    ...(Object.keys(configs).length > 0 && { configs }),
  };
  return [
    { path: K3S_REGISTRIES_PATH, permissions: KEY_PERMISSIONS, content: stringify(document, YAML_OPTIONS) },
    ...certificateFiles,
  ];
}
