import { posix } from 'node:path';
import type { ClientConfig } from '@capstan/api';
import { ExtensionConfigError } from './runtime-errors.js';

// Where an extension is called (upstream internal/runtime/client urlForExtension, plus the URL rules of its
// ExtensionConfig webhook): its base URL, either `spec.clientConfig.url` or the Service's in-cluster name, with the
// hook's path joined onto the base path.

/** The extension's base URL, refused unless it is https without credentials, query or fragment. */
export function extensionBaseUrl(clientConfig: ClientConfig): URL {
  const service = clientConfig.service;
  if (service) {
    const port = service.port ?? 443;
    const base = new URL(`https://${service.name}.${service.namespace}.svc:${port}`);
    if (service.path) base.pathname = service.path;
    return base;
  }
  if (!clientConfig.url) throw new ExtensionConfigError('clientConfig needs a url or a service');
  let url: URL;
  try {
    url = new URL(clientConfig.url);
  } catch {
    throw new ExtensionConfigError('clientConfig.url is not a URL');
  }
  // The scheme only: the rest of a URL that fails these rules could be a credential.
  if (url.protocol !== 'https:')
    throw new ExtensionConfigError(`clientConfig.url must use https, not ${url.protocol.slice(0, 16)}`);
  if (url.username || url.password)
    throw new ExtensionConfigError('clientConfig.url must not hold user info');
  if (url.search) throw new ExtensionConfigError('clientConfig.url must not have a query');
  if (url.hash) throw new ExtensionConfigError('clientConfig.url must not have a fragment');
  if (!url.hostname) throw new ExtensionConfigError('clientConfig.url has no host');
  return url;
}

/**
 * The URL of one call: the base path joined with `path` (as Go's path.Join, which also drops a trailing slash), and
 * upstream's `timeout` query parameter telling the extension how long the caller waits.
 */
export function extensionCallUrl(clientConfig: ClientConfig, path: string, timeoutSeconds?: number): URL {
  const url = extensionBaseUrl(clientConfig);
  url.pathname = posix.join('/', url.pathname, path);
  if (timeoutSeconds !== undefined && timeoutSeconds > 0)
    url.searchParams.set('timeout', `${timeoutSeconds}s`);
  return url;
}
