import { request } from 'node:https';
import { request as httpRequest, type RequestOptions } from 'node:http';
import { type KubeConfig } from '@kubernetes/client-node';
import { type Manifest } from './manifests.js';

/** A refused request, with the API server's own message (never the body we sent). */
export class ApplyError extends Error {
  constructor(
    readonly manifest: Pick<Manifest, 'kind' | 'metadata'>,
    readonly status: number,
    reason: string,
  ) {
    const ns = manifest.metadata.namespace ? `${manifest.metadata.namespace}/` : '';
    super(`${manifest.kind} ${ns}${manifest.metadata.name}: ${reason} (HTTP ${status})`);
    this.name = 'ApplyError';
  }
}

interface ApiResource {
  name: string;
  kind: string;
  namespaced: boolean;
}

export interface ApplyOptions {
  fieldManager: string;
  dryRun?: boolean;
}

/**
 * Server-side apply of raw manifests. Raw HTTP on purpose: client-node's typed serialiser drops wire names it
 * does not model under that spelling (x-kubernetes-validations, x-kubernetes-preserve-unknown-fields).
 */
export class ManifestApplier {
  private readonly discovery = new Map<string, Promise<ApiResource[]>>();

  constructor(private readonly kc: KubeConfig) {}

  async apply(manifest: Manifest, options: ApplyOptions): Promise<unknown> {
    const path = await this.pathOf(manifest);
    // Strict: an unknown or duplicated field is an error, not silently pruned.
    const query = new URLSearchParams({ fieldManager: options.fieldManager, force: 'true', fieldValidation: 'Strict' });
    if (options.dryRun) query.set('dryRun', 'All');
    const response = await this.send('PATCH', `${path}?${query}`, JSON.stringify(manifest), 'application/apply-patch+yaml');
    if (response.status >= 300) throw new ApplyError(manifest, response.status, reasonOf(response.body));
    return JSON.parse(response.body);
  }

  async get(manifest: Manifest): Promise<Record<string, unknown> | undefined> {
    const response = await this.send('GET', await this.pathOf(manifest));
    if (response.status === 404) return undefined;
    if (response.status >= 300) throw new ApplyError(manifest, response.status, reasonOf(response.body));
    return JSON.parse(response.body) as Record<string, unknown>;
  }

  /** Forgets what discovery found, e.g. after CRDs were installed. */
  refreshDiscovery(): void {
    this.discovery.clear();
  }

  private async pathOf(manifest: Manifest): Promise<string> {
    const [group, version] = manifest.apiVersion.includes('/') ? manifest.apiVersion.split('/') : ['', manifest.apiVersion];
    const base = group ? `/apis/${group}/${version}` : `/api/${version}`;
    const resource = (await this.resources(base)).find((r) => r.kind === manifest.kind && !r.name.includes('/'));
    if (!resource) throw new ApplyError(manifest, 404, `the server does not serve kind ${manifest.kind} in ${manifest.apiVersion}`);
    const ns = resource.namespaced ? `/namespaces/${manifest.metadata.namespace ?? 'default'}` : '';
    return `${base}${ns}/${resource.name}/${manifest.metadata.name}`;
  }

  private resources(base: string): Promise<ApiResource[]> {
    let found = this.discovery.get(base);
    if (!found) {
      found = this.send('GET', base).then((r) => (r.status === 200 ? (JSON.parse(r.body) as { resources: ApiResource[] }).resources : []));
      this.discovery.set(base, found);
      found.catch(() => this.discovery.delete(base));
    }
    return found;
  }

  private async send(method: string, path: string, body?: string, contentType?: string): Promise<{ status: number; body: string }> {
    const cluster = this.kc.getCurrentCluster();
    if (!cluster) throw new Error('the kubeconfig has no current cluster');
    const url = new URL(path, cluster.server);
    const options: RequestOptions & { ca?: Buffer } = {
      method,
      hostname: url.hostname,
      port: url.port,
      path: `${url.pathname}${url.search}`,
      headers: { accept: 'application/json', ...(contentType ? { 'content-type': contentType } : {}) },
    };
    await this.kc.applyToHTTPSOptions(options);
    const send = url.protocol === 'https:' ? request : httpRequest;
    return new Promise((resolve, reject) => {
      const req = send(options, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
      });
      req.on('error', reject);
      if (body) req.write(body);
      req.end();
    });
  }
}

function reasonOf(body: string): string {
  try {
    return (JSON.parse(body) as { message?: string }).message ?? 'request refused';
  } catch {
    return 'request refused';
  }
}
