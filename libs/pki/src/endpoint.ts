import { isIP } from 'node:net';
import { PkiError } from './errors.js';

/** A cluster's API endpoint as Cluster API stores it (`spec.controlPlaneEndpoint`). */
export interface ApiEndpoint {
  host: string;
  port: number;
}

/** `https://host:port`, with an IPv6 host in brackets. */
export function apiServerUrl(endpoint: ApiEndpoint): string {
  if (!endpoint.host || /[\s/]/.test(endpoint.host)) {
    throw new PkiError('endpoint host must be a host name or IP address', 'InvalidArgument');
  }
  if (!Number.isInteger(endpoint.port) || endpoint.port < 1 || endpoint.port > 65535) {
    throw new PkiError(`endpoint port ${endpoint.port} is not a TCP port`, 'InvalidArgument');
  }
  const host = isIP(endpoint.host) === 6 ? `[${endpoint.host}]` : endpoint.host;
  return `https://${host}:${endpoint.port}`;
}
