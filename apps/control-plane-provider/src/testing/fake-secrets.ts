import type { V1Secret } from '@kubernetes/client-node';
import { KubeApiError, keyOf, objectKey, type ObjectRef, type ResourceClient } from '@capstan/kube';
import type { SecretAccess } from '../k3scontrolplane/k3scontrolplane.certificates.js';
import { SECRETS } from '../k3scontrolplane/secrets.js';

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** RFC 7386. */
function mergePatch(target: unknown, patch: unknown): unknown {
  if (!isObject(patch)) return patch;
  const result: Json = isObject(target) ? { ...target } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete result[key];
    else result[key] = mergePatch(result[key], value);
  }
  return result;
}

/** What the API server does with `stringData`: merged into `data`, base64, and never returned. */
function storedForm(secret: V1Secret): V1Secret {
  const { stringData, ...rest } = secret;
  if (!stringData) return rest;
  const encoded = Object.fromEntries(
    Object.entries(stringData).map(([k, v]) => [k, Buffer.from(v, 'utf8').toString('base64')]),
  );
  return { ...rest, data: { ...rest.data, ...encoded } };
}

const apiError = (method: string, ref: ObjectRef, code: number, reason: string) =>
  new KubeApiError(method, `/api/v1/namespaces/${ref.namespace}/secrets/${ref.name}`, { code, reason }, code);

/**
 * Secrets in memory, doing what the phases rely on of the API server: resourceVersions, the guard of a
 * merge patch that names one, AlreadyExists, `stringData`. The cache is empty unless `cached` is asked for,
 * so the phases read through to the "API" as they do while the informer lags.
 */
export class FakeSecrets {
  readonly objects = new Map<string, V1Secret>();
  /** Writes in order: `create <name>` and `patch <name>`. */
  readonly writes: string[] = [];
  private version = 0;
  /** Secrets another writer creates just before this one tries (a lost create race). */
  private readonly racing = new Map<string, V1Secret>();

  /** The phases' view: only the calls they make are implemented. */
  access(options: { cached?: boolean } = {}): SecretAccess {
    const client = {
      type: SECRETS,
      get: (ref: ObjectRef) => this.get(ref),
      create: (secret: V1Secret) => this.create(secret),
      mergePatch: (ref: ObjectRef, patch: unknown) => this.patch(ref, patch),
    };
    return {
      // The phases call get, create and mergePatch only; the rest of ResourceClient is not needed here.
      client: client as unknown as ResourceClient<V1Secret>,
      cache: {
        getByName: (namespace, name) =>
          options.cached ? this.objects.get(keyOf({ namespace, name })) : undefined,
      },
    };
  }

  /** Stores `secret` as if someone else wrote it. */
  put(secret: V1Secret): V1Secret {
    const stored = {
      ...storedForm(secret),
      metadata: { ...secret.metadata, resourceVersion: this.nextVersion() },
    };
    this.objects.set(objectKey(stored), stored);
    return stored;
  }

  /** The next create of `secret`'s name loses the race against `secret`. */
  raceOn(secret: V1Secret): void {
    this.racing.set(objectKey(secret), secret);
  }

  text(namespace: string, name: string, key: string): string | undefined {
    const value = this.objects.get(keyOf({ namespace, name }))?.data?.[key];
    return value === undefined ? undefined : Buffer.from(value, 'base64').toString('utf8');
  }

  private nextVersion(): string {
    this.version += 1;
    return String(this.version);
  }

  private async get(ref: ObjectRef): Promise<V1Secret> {
    const stored = this.objects.get(keyOf(ref));
    if (!stored) throw apiError('GET', ref, 404, 'NotFound');
    return structuredClone(stored);
  }

  private async create(secret: V1Secret): Promise<V1Secret> {
    const ref = { namespace: secret.metadata?.namespace, name: secret.metadata!.name! };
    const winner = this.racing.get(keyOf(ref));
    if (winner) {
      this.racing.delete(keyOf(ref));
      this.put(winner);
    }
    if (this.objects.has(keyOf(ref))) throw apiError('POST', ref, 409, 'AlreadyExists');
    this.writes.push(`create ${ref.name}`);
    return structuredClone(this.put(secret));
  }

  private async patch(ref: ObjectRef, patch: unknown): Promise<V1Secret> {
    const stored = this.objects.get(keyOf(ref));
    if (!stored) throw apiError('PATCH', ref, 404, 'NotFound');
    const guard =
      isObject(patch) && isObject(patch['metadata']) ? patch['metadata']['resourceVersion'] : undefined;
    if (guard !== undefined && guard !== stored.metadata?.resourceVersion) {
      throw apiError('PATCH', ref, 409, 'Conflict');
    }
    const merged = storedForm(mergePatch(stored, patch) as V1Secret);
    merged.metadata = { ...merged.metadata, resourceVersion: this.nextVersion() };
    this.objects.set(keyOf(ref), merged);
    this.writes.push(`patch ${ref.name}`);
    return structuredClone(merged);
  }
}
