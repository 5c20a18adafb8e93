import { type KubernetesObject } from '@kubernetes/client-node';
import { HttpMethod, PatchStrategy } from './http-method.js';
import type { KubeClient } from './client.js';
import { isNotFound } from './errors.js';
import { apiVersionOf, refOf, resourcePath, type ObjectRef, type ResourceType } from './resource.js';

export interface ListOptions {
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
  limit?: number;
  continue?: string;
  resourceVersion?: string;
  signal?: AbortSignal;
}

export interface ListResult<T> {
  items: T[];
  resourceVersion: string;
  continue?: string;
}

export interface WriteOptions {
  dryRun?: boolean;
  /** Defaults to the client's field manager. */
  fieldManager?: string;
  /**
   * The API server's own deadline for the request (`?timeout=`): past it the server no longer applies the write,
   * even when the client gave up earlier and never hears the answer.
   */
  serverTimeoutSeconds?: number;
  signal?: AbortSignal;
}

export interface ApplyOptions extends WriteOptions {
  /** Take over fields owned by other managers; default true, as controllers own what they apply. */
  force?: boolean;
}

export interface DeleteOptions {
  propagationPolicy?: 'Foreground' | 'Background' | 'Orphan';
  gracePeriodSeconds?: number;
  /** Delete only this incarnation / this version of the object. */
  preconditions?: { uid?: string; resourceVersion?: string };
  signal?: AbortSignal;
}

export type JsonPatchOperation =
  | { op: 'add' | 'replace' | 'test'; path: string; value: unknown }
  | { op: 'remove'; path: string }
  | { op: 'move' | 'copy'; from: string; path: string };

interface ObjectList<T> {
  items?: T[];
  metadata?: { resourceVersion?: string; continue?: string };
}

/** Typed access to one kind: CRUD, merge/JSON patch, server-side apply, and the status subresource. */
export class ResourceClient<T extends KubernetesObject = KubernetesObject> {
  constructor(
    readonly client: KubeClient,
    readonly type: ResourceType,
  ) {}

  get(ref: ObjectRef, signal?: AbortSignal): Promise<T> {
    return this.client.request<T>({ method: HttpMethod.GET, path: this.path(ref), signal });
  }

  /** The object, or undefined when it does not exist. */
  async getIfExists(ref: ObjectRef, signal?: AbortSignal): Promise<T | undefined> {
    try {
      return await this.get(ref, signal);
    } catch (error) {
      if (isNotFound(error)) return undefined;
      throw error;
    }
  }

  /** One page; pass `limit` and the returned `continue` to page. */
  async list(options: ListOptions = {}): Promise<ListResult<T>> {
    const list = await this.client.request<ObjectList<T>>({
      method: HttpMethod.GET,
      path: resourcePath(this.type, { namespace: options.namespace }),
      query: {
        labelSelector: options.labelSelector,
        fieldSelector: options.fieldSelector,
        limit: options.limit,
        continue: options.continue,
        resourceVersion: options.resourceVersion,
      },
      signal: options.signal,
    });
    const kind = this.type.kind;
    const apiVersion = apiVersionOf(this.type);
    // Items of a list carry no kind/apiVersion; fill them so cached objects are self-describing.
    const items = (list.items ?? []).map((item) => ({ ...item, apiVersion, kind }) as T);
    return {
      items,
      resourceVersion: list.metadata?.resourceVersion ?? '',
      continue: list.metadata?.continue || undefined,
    };
  }

  /** Every page; the resourceVersion is the snapshot the pages were read at. */
  async listAll(options: Omit<ListOptions, 'continue'> & { pageSize?: number } = {}): Promise<ListResult<T>> {
    const items: T[] = [];
    let token: string | undefined;
    let resourceVersion = '';
    do {
      const page = await this.list({ ...options, limit: options.pageSize ?? 500, continue: token });
      items.push(...page.items);
      resourceVersion = page.resourceVersion;
      token = page.continue;
    } while (token);
    return { items, resourceVersion };
  }

  create(obj: T, options: WriteOptions = {}): Promise<T> {
    return this.client.request<T>({
      method: HttpMethod.POST,
      path: resourcePath(this.type, { namespace: obj.metadata?.namespace }),
      query: this.writeQuery(options),
      body: this.withTypeMeta(obj),
      signal: options.signal,
    });
  }

  /** PUT: fails with 409 when `metadata.resourceVersion` is stale. */
  replace(obj: T, options: WriteOptions = {}): Promise<T> {
    return this.client.request<T>({
      method: HttpMethod.PUT,
      path: this.path(refOf(obj)),
      query: this.writeQuery(options),
      body: this.withTypeMeta(obj),
      signal: options.signal,
    });
  }

  replaceStatus(obj: T, options: WriteOptions = {}): Promise<T> {
    return this.client.request<T>({
      method: HttpMethod.PUT,
      path: this.path(refOf(obj), 'status'),
      query: this.writeQuery(options),
      body: this.withTypeMeta(obj),
      signal: options.signal,
    });
  }

  /** Returns the object (when finalizers keep it) or the server's Status. */
  delete(ref: ObjectRef, options: DeleteOptions = {}): Promise<T | KubernetesObject> {
    const body =
      options.propagationPolicy || options.preconditions || options.gracePeriodSeconds !== undefined
        ? {
            apiVersion: 'v1',
            kind: 'DeleteOptions',
            propagationPolicy: options.propagationPolicy,
            gracePeriodSeconds: options.gracePeriodSeconds,
            preconditions: options.preconditions,
          }
        : undefined;
    return this.client.request<T>({
      method: HttpMethod.DELETE,
      path: this.path(ref),
      body,
      signal: options.signal,
    });
  }

  /** RFC 7386 merge patch. Include `metadata.resourceVersion` in the patch to make it conditional. */
  mergePatch(
    ref: ObjectRef,
    patch: unknown,
    options: WriteOptions & { subresource?: 'status' } = {},
  ): Promise<T> {
    return this.patch(ref, patch, PatchStrategy.MergePatch, options);
  }

  /** RFC 6902 JSON patch; a failed `test` op makes the whole patch fail, which guards concurrent writers. */
  jsonPatch(
    ref: ObjectRef,
    ops: JsonPatchOperation[],
    options: WriteOptions & { subresource?: 'status' } = {},
  ): Promise<T> {
    return this.patch(ref, ops, PatchStrategy.JsonPatch, options);
  }

  /** Server-side apply of the fields in `obj` (apiVersion and kind are filled in), forced by default. */
  apply(obj: T, options: ApplyOptions = {}): Promise<T> {
    return this.patch(refOf(obj), this.withTypeMeta(obj), PatchStrategy.ServerSideApply, {
      ...options,
      force: options.force ?? true,
    });
  }

  /** Merge patch of `{status}` on the status subresource. */
  patchStatus(ref: ObjectRef, status: unknown, options: WriteOptions = {}): Promise<T> {
    return this.patch(ref, { status }, PatchStrategy.MergePatch, { ...options, subresource: 'status' });
  }

  /** Server-side apply on the status subresource: only `status` of `obj` is written, owned by the field manager. */
  applyStatus(obj: T, options: ApplyOptions = {}): Promise<T> {
    return this.patch(refOf(obj), this.withTypeMeta(obj), PatchStrategy.ServerSideApply, {
      ...options,
      force: options.force ?? true,
      subresource: 'status',
    });
  }

  private patch(
    ref: ObjectRef,
    body: unknown,
    contentType: PatchStrategy,
    options: ApplyOptions & { subresource?: 'status' },
  ): Promise<T> {
    return this.client.request<T>({
      method: HttpMethod.PATCH,
      path: this.path(ref, options.subresource),
      query: {
        ...this.writeQuery(options),
        force: contentType === PatchStrategy.ServerSideApply ? (options.force ?? true) : undefined,
      },
      body,
      contentType,
      signal: options.signal,
    });
  }

  private path(ref: ObjectRef, subresource?: string): string {
    if (this.type.namespaced && !ref.namespace) {
      throw new TypeError(`${this.type.kind} ${ref.name}: a namespaced kind needs a namespace`);
    }
    return resourcePath(this.type, { namespace: ref.namespace, name: ref.name, subresource });
  }

  private writeQuery(options: WriteOptions) {
    return {
      fieldManager: options.fieldManager ?? this.client.fieldManager,
      dryRun: options.dryRun ? 'All' : undefined,
      timeout: options.serverTimeoutSeconds !== undefined ? `${options.serverTimeoutSeconds}s` : undefined,
    };
  }

  private withTypeMeta(obj: T): T {
    return { ...obj, apiVersion: apiVersionOf(this.type), kind: this.type.kind };
  }
}
