import { randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import { KubeClient, type KubeClientOptions, type KubeRequest, type KubeResponse, type KubeTransport } from '../../client.js';
import { ClusterConnection } from '../../connection/cluster-connection.js';
import { HttpMethod, PatchStrategy } from '../../http-method.js';
import { deepEqual } from '../../patch/json-diff.js';
import type { DeleteOptions, JsonPatchOperation } from '../../resource-client.js';
import { apiVersionOf, resourceId, type ResourceType } from '../../resource.js';
import {
  alreadyExists,
  ApiRefusal,
  badRequest,
  conflict,
  invalid,
  notFound,
  noSuchResource,
  uidMismatch,
  type Target,
} from './api-status.js';
import { FieldOwnership, type FieldWrite, type WriteScope } from './field-ownership.js';
import { applyJsonPatch, applyMergePatch, JsonPatchError } from '../../patch/json-patches.js';
import {
  fieldsMatch,
  labelsMatch,
  parseFieldSelector,
  parseLabelSelector,
  SelectorSyntaxError,
  type FieldRequirement,
  type LabelRequirement,
} from './selector-strings.js';
import { WatchHub } from './watch-hub.js';

type Obj = Record<string, unknown> & { metadata: Metadata; status?: unknown };

interface Metadata {
  name?: string;
  generateName?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  deletionGracePeriodSeconds?: number;
  finalizers?: string[];
  labels?: Record<string, string>;
  managedFields?: unknown[];
  [field: string]: unknown;
}

/** A kind the in-memory server serves; `statusSubresource` defaults to true (as for every Capstan CRD). */
export interface ServedKind {
  type: ResourceType;
  statusSubresource?: boolean;
}

export interface InMemoryApiServerOptions {
  /** Changes kept for watches to resume from; older resourceVersions are 410 Gone. */
  historyLimit?: number;
}

interface Kind {
  type: ResourceType;
  id: string;
  statusSubresource: boolean;
  objects: Map<string, { obj: Obj; fields: FieldOwnership }>;
}

interface Route {
  kind: Kind;
  namespace?: string;
  name?: string;
  subresource?: string;
}

/** Metadata a writer cannot change: the server keeps its own value. */
const SERVER_SET_METADATA = [
  'name',
  'namespace',
  'uid',
  'creationTimestamp',
  'deletionTimestamp',
  'deletionGracePeriodSeconds',
  'generation',
] as const;

const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const NAME_SUFFIX_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';

/**
 * The one stand-in for the Kubernetes API: a KubeTransport that answers a KubeClient's requests from memory, with
 * the semantics reconcilers rely on (resourceVersions and conflicts, the status subresource, generation, finalizers
 * and deletion, label and field selectors, paging, merge and JSON patch, server-side apply with field managers,
 * watches that resume or are 410 Gone). The same contract tests run it and the real API server
 * (resource-api-contract.ts), so it cannot drift from it. What it does not do: schemas, defaulting, admission,
 * RBAC, garbage collection of owned objects, namespaces that must exist, and lists with map semantics in apply.
 */
export class InMemoryApiServer implements KubeTransport {
  private revision = 1000;
  private readonly kinds = new Map<string, Kind>();
  private readonly watches: WatchHub;

  constructor(kinds: Iterable<ResourceType | ServedKind> = [], options: InMemoryApiServerOptions = {}) {
    this.watches = new WatchHub(options.historyLimit ?? 10_000);
    for (const kind of kinds) this.serve(kind);
  }

  /** Serves one more kind (a CRD being installed). */
  serve(kind: ResourceType | ServedKind): void {
    const served: ServedKind = 'type' in kind ? kind : { type: kind };
    const id = resourceId(served.type);
    if (this.kinds.has(id)) return;
    this.kinds.set(id, {
      type: served.type,
      id,
      statusSubresource: served.statusSubresource ?? true,
      objects: new Map(),
    });
  }

  /** A client whose requests this server answers. */
  client(options: Omit<KubeClientOptions, 'transport'> = {}): KubeClient {
    const connection = new ClusterConnection({ context: 'in-memory', server: 'http://in-memory.invalid' });
    return new KubeClient(connection, { ...options, transport: this });
  }

  /** Ends every open watch: informers re-watch from their resourceVersion, as after an API server restart. */
  closeWatches(): void {
    this.watches.closeAll();
  }

  get openWatches(): number {
    return this.watches.openWatches;
  }

  async send(req: KubeRequest, signal: AbortSignal): Promise<KubeResponse> {
    signal.throwIfAborted();
    try {
      const route = this.route(req.path);
      const query = req.query ?? {};
      // What would cross the wire: the body as JSON, never the caller's own object.
      const body = req.body === undefined ? undefined : (JSON.parse(JSON.stringify(req.body)) as unknown);
      if (req.method === HttpMethod.GET && !route.name && String(query.watch) === 'true') {
        return this.watch(route, query, signal);
      }
      return answer(200, this.handle(req, route, query, body));
    } catch (err) {
      if (err instanceof ApiRefusal) return answer(err.code, err.toStatus());
      throw err;
    }
  }

  private handle(req: KubeRequest, route: Route, query: Record<string, unknown>, body: unknown): unknown {
    const manager = typeof query.fieldManager === 'string' ? query.fieldManager : 'unknown';
    const dryRun = query.dryRun !== undefined;
    const scope: WriteScope = route.subresource === 'status' ? 'status' : 'main';
    if (route.subresource && (route.subresource !== 'status' || !route.kind.statusSubresource)) {
      throw noSuchResource();
    }
    switch (req.method) {
      case HttpMethod.GET:
        return route.name ? this.render(route.kind, this.stored(route).obj) : this.list(route, query);
      case HttpMethod.POST:
        if (route.name) throw new ApiRefusal(405, 'MethodNotAllowed', 'the server does not allow this method on the requested resource');
        return this.create(route, body as Obj, manager, dryRun);
      case HttpMethod.PUT:
        return this.update(route, scope, manager, dryRun, () => {
          const next = body as Obj;
          const sent = next.metadata?.resourceVersion;
          if (!sent && route.kind.type.group !== '') {
            throw invalid(this.target(route), 'metadata.resourceVersion', 'must be specified for an update');
          }
          return next;
        });
      case HttpMethod.PATCH:
        return this.patch(req, route, scope, manager, dryRun, body, query.force === true || query.force === 'true');
      case HttpMethod.DELETE:
        return this.delete(route, (body ?? {}) as DeleteOptions, dryRun);
      default:
        throw new ApiRefusal(405, 'MethodNotAllowed', `method ${req.method} is not allowed`);
    }
  }

  private route(path: string): Route {
    const parts = path.split('/').filter((p) => p !== '').map(decodeURIComponent);
    let group: string;
    let version: string;
    let rest: string[];
    if (parts[0] === 'api') [group, version, rest] = ['', parts[1] ?? '', parts.slice(2)];
    else if (parts[0] === 'apis') [group, version, rest] = [parts[1] ?? '', parts[2] ?? '', parts.slice(3)];
    else throw noSuchResource();
    let namespace: string | undefined;
    const namespaceSubresource = rest.length === 3 && ['status', 'finalize'].includes(rest[2]!);
    if (rest[0] === 'namespaces' && rest.length >= 3 && !namespaceSubresource) {
      namespace = rest[1];
      rest = rest.slice(2);
    }
    const [plural, name, subresource, ...extra] = rest;
    const kind = plural === undefined ? undefined : this.kinds.get(resourceId({ group, version, plural, kind: '', namespaced: false }));
    if (!kind || extra.length > 0 || (namespace !== undefined && !kind.type.namespaced)) throw noSuchResource();
    return { kind, namespace, name, subresource };
  }

  private target(route: Route, name = route.name ?? ''): Target {
    const { group, plural } = route.kind.type;
    return { resource: group === '' ? plural : `${plural}.${group}`, name, group, plural };
  }

  private stored(route: Route) {
    const entry = route.kind.objects.get(`${route.namespace ?? ''}/${route.name}`);
    if (!entry) throw notFound(this.target(route));
    return entry;
  }

  private list(route: Route, query: Record<string, unknown>) {
    const { labels, fields } = selectorsOf(query);
    const after = typeof query.continue === 'string' && query.continue ? continueKey(query.continue) : undefined;
    const limit = Number(query.limit ?? 0);
    const keys = [...route.kind.objects.keys()]
      .filter((k) => route.namespace === undefined || k.startsWith(`${route.namespace}/`))
      .filter((k) => after === undefined || k > after)
      .sort();
    const items: unknown[] = [];
    let next: string | undefined;
    let last = '';
    for (const key of keys) {
      const { obj } = route.kind.objects.get(key)!;
      if (!matchesSelectors(obj, labels, fields)) continue;
      if (limit > 0 && items.length === limit) {
        next = continueToken(last);
        break;
      }
      items.push(this.render(route.kind, obj));
      last = key;
    }
    const { kind } = route.kind.type;
    return {
      apiVersion: apiVersionOf(route.kind.type),
      kind: `${kind}List`,
      metadata: { resourceVersion: String(this.revision), ...(next ? { continue: next } : {}) },
      // The real server's list items carry kind and apiVersion for custom resources, not for core kinds.
      items,
    };
  }

  private create(route: Route, body: Obj, manager: string, dryRun: boolean, applied = false) {
    if (!body || typeof body !== 'object' || !body.metadata) throw badRequest('the object has no metadata');
    const meta = body.metadata;
    const namespace = route.kind.type.namespaced ? (route.namespace ?? meta.namespace) : undefined;
    if (route.kind.type.namespaced && !namespace) throw badRequest('a namespaced object needs a namespace');
    if (meta.namespace && route.namespace && meta.namespace !== route.namespace) {
      throw badRequest('the namespace of the provided object does not match the namespace sent on the request');
    }
    const name = meta.name ?? (meta.generateName ? meta.generateName + suffix() : undefined);
    const target = this.target(route, name ?? '');
    if (!name) throw invalid(target, 'metadata.name', 'name or generateName is required');
    if (name.length > 253 || !DNS_SUBDOMAIN.test(name)) {
      throw invalid(target, 'metadata.name', `Invalid value: "${name}": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.'`);
    }
    const key = `${namespace ?? ''}/${name}`;
    if (route.kind.objects.has(key)) throw alreadyExists(target);
    const now = timestamp();
    const obj: Obj = {
      ...body,
      apiVersion: apiVersionOf(route.kind.type),
      kind: route.kind.type.kind,
      metadata: {
        ...meta,
        name,
        ...(namespace ? { namespace } : {}),
        uid: randomUUID(),
        // Custom resources count generations; the core kinds the tests use (ConfigMap, Secret, Node) do not.
        ...(route.kind.type.group !== '' ? { generation: 1 } : {}),
        creationTimestamp: now,
      },
    };
    delete obj.metadata.resourceVersion;
    delete obj.metadata.managedFields;
    delete obj.metadata.deletionTimestamp;
    if (route.kind.statusSubresource && route.kind.type.group !== '') delete obj.status;
    const fields = new FieldOwnership();
    const write: FieldWrite = { manager, scope: 'main', apiVersion: apiVersionOf(route.kind.type), time: now };
    if (applied) fields.apply(write, body, obj);
    else fields.update(write, {}, obj);
    if (dryRun) return this.render(route.kind, obj, fields);
    obj.metadata.resourceVersion = String(++this.revision);
    route.kind.objects.set(key, { obj, fields });
    this.announce(route.kind, 'ADDED', obj);
    return this.render(route.kind, obj);
  }

  /**
   * Every write to an existing object: `change` gives the object as the writer wants it; the server keeps what the
   * writer may not change (the other scope, identity, server-set metadata), checks the resourceVersion the writer
   * sent, bumps generation on a spec change, and deletes an object whose last finalizer went while it is deleting.
   */
  private update(
    route: Route,
    scope: WriteScope,
    manager: string,
    dryRun: boolean,
    change: (current: Obj) => Obj,
    apply?: { applied: Obj },
  ) {
    const entry = this.stored(route);
    const current = entry.obj;
    const wanted = change(structuredClone(current));
    const sent = wanted.metadata?.resourceVersion;
    if (sent && sent !== current.metadata.resourceVersion) {
      throw conflict(this.target(route), 'the object has been modified; please apply your changes to the latest version and try again');
    }
    if (wanted.metadata?.uid && wanted.metadata.uid !== current.metadata.uid) {
      throw uidMismatch(this.target(route), wanted.metadata.uid, current.metadata.uid);
    }
    const next: Obj =
      scope === 'status'
        ? { ...current, status: wanted.status }
        : { ...wanted, status: route.kind.statusSubresource ? current.status : wanted.status };
    if (next.status === undefined) delete next.status;
    next.apiVersion = current.apiVersion;
    next.kind = current.kind;
    if (scope === 'main') {
      const finalizers = wanted.metadata?.finalizers ?? [];
      if (current.metadata.deletionTimestamp && finalizers.some((f) => !(current.metadata.finalizers ?? []).includes(f))) {
        throw invalid(this.target(route), 'metadata.finalizers', 'Forbidden: no new finalizers can be added if the object is being deleted');
      }
      const kept: Metadata = { ...wanted.metadata };
      for (const field of SERVER_SET_METADATA) {
        if (current.metadata[field] === undefined) delete kept[field];
        else Object.assign(kept, { [field]: current.metadata[field] });
      }
      next.metadata = kept;
    } else next.metadata = { ...current.metadata };
    delete next.metadata.managedFields;
    if (current.metadata.generation !== undefined && !deepEqual(specOf(current), specOf(next))) {
      next.metadata.generation = current.metadata.generation + 1;
    }

    const fields = dryRun ? entry.fields.copy() : entry.fields;
    const write: FieldWrite = { manager, scope, apiVersion: apiVersionOf(route.kind.type), time: timestamp() };
    if (apply) fields.apply(write, apply.applied, next);
    else fields.update(write, current, next);
    if (dryRun) return this.render(route.kind, next, fields);
    if (sameObject(next, current)) {
      // A write that changes nothing is not a new version (no event, same resourceVersion).
      return this.render(route.kind, current);
    }
    next.metadata.resourceVersion = String(++this.revision);
    const key = `${route.namespace ?? ''}/${route.name}`;
    if (next.metadata.deletionTimestamp && (next.metadata.finalizers ?? []).length === 0) {
      route.kind.objects.delete(key);
      this.announce(route.kind, 'DELETED', next);
      return this.render(route.kind, next, fields);
    }
    entry.obj = next;
    this.announce(route.kind, 'MODIFIED', next, current);
    return this.render(route.kind, next);
  }

  private patch(
    req: KubeRequest,
    route: Route,
    scope: WriteScope,
    manager: string,
    dryRun: boolean,
    body: unknown,
    force: boolean,
  ) {
    switch (req.contentType) {
      case PatchStrategy.MergePatch:
        return this.update(route, scope, manager, dryRun, (current) => applyMergePatch(current, body) as Obj);
      case PatchStrategy.JsonPatch:
        return this.update(route, scope, manager, dryRun, (current) => {
          try {
            return applyJsonPatch(current, body as JsonPatchOperation[]) as Obj;
          } catch (err) {
            if (err instanceof JsonPatchError) throw new ApiRefusal(422, 'Invalid', err.message);
            throw err;
          }
        });
      case PatchStrategy.ServerSideApply: {
        if (!force) {
          throw new ApiRefusal(415, 'UnsupportedMediaType', 'the in-memory API server applies only with force (conflicts are not modelled)');
        }
        const applied = body as Obj;
        if (!route.kind.objects.has(`${route.namespace ?? ''}/${route.name}`)) {
          if (scope === 'status') throw notFound(this.target(route));
          return this.create(route, { ...applied, metadata: { ...applied.metadata, name: route.name } }, manager, dryRun, true);
        }
        return this.update(route, scope, manager, dryRun, (current) => mergeApplied(current, applied), { applied });
      }
      default:
        throw new ApiRefusal(415, 'UnsupportedMediaType', `the in-memory API server does not accept patches of type ${req.contentType ?? '(none)'}`);
    }
  }

  private delete(route: Route, options: DeleteOptions, dryRun: boolean) {
    const entry = this.stored(route);
    const current = entry.obj;
    const pre = options.preconditions;
    if (pre?.uid && pre.uid !== current.metadata.uid) {
      throw uidMismatch(this.target(route), pre.uid, current.metadata.uid);
    }
    if (pre?.resourceVersion && pre.resourceVersion !== current.metadata.resourceVersion) {
      throw conflict(this.target(route), `Precondition failed: ResourceVersion in precondition: ${pre.resourceVersion}, ResourceVersion in object meta: ${current.metadata.resourceVersion}`);
    }
    if (dryRun) return this.render(route.kind, current);
    const key = `${route.namespace ?? ''}/${route.name}`;
    if ((current.metadata.finalizers ?? []).length > 0) {
      if (current.metadata.deletionTimestamp) return this.render(route.kind, current);
      const next: Obj = {
        ...current,
        metadata: {
          ...current.metadata,
          deletionTimestamp: timestamp(),
          deletionGracePeriodSeconds: 0,
          ...(current.metadata.generation !== undefined ? { generation: current.metadata.generation + 1 } : {}),
          resourceVersion: String(++this.revision),
        },
      };
      entry.obj = next;
      this.announce(route.kind, 'MODIFIED', next, current);
      return this.render(route.kind, next);
    }
    route.kind.objects.delete(key);
    const gone: Obj = { ...current, metadata: { ...current.metadata, resourceVersion: String(++this.revision) } };
    this.announce(route.kind, 'DELETED', gone);
    return this.render(route.kind, gone, entry.fields);
  }

  private watch(route: Route, query: Record<string, unknown>, signal: AbortSignal): KubeResponse {
    const { labels, fields } = selectorsOf(query);
    const rv = query.resourceVersion === undefined || query.resourceVersion === '' || query.resourceVersion === '0'
      ? undefined
      : Number(query.resourceVersion);
    if (rv !== undefined && !Number.isInteger(rv)) throw badRequest(`invalid resource version "${String(query.resourceVersion)}"`);
    const stream = this.watches.open(
      { kindId: route.kind.id, namespace: route.namespace, labels, fields },
      rv,
      () => [...route.kind.objects.values()].map(({ obj }) => this.render(route.kind, obj)),
      query.timeoutSeconds === undefined ? undefined : Number(query.timeoutSeconds),
    );
    const stop = () => stream.destroy(signal.reason instanceof Error ? signal.reason : new Error('watch aborted'));
    signal.addEventListener('abort', stop, { once: true });
    stream.once('close', () => signal.removeEventListener('abort', stop));
    return { statusCode: 200, body: Object.assign(stream, { text: () => readAll(stream) }) };
  }

  private announce(kind: Kind, type: 'ADDED' | 'MODIFIED' | 'DELETED', obj: Obj, previous?: Obj): void {
    this.watches.record({
      resourceVersion: this.revision,
      kindId: kind.id,
      type,
      object: this.render(kind, obj),
      previous: previous && this.render(kind, previous),
    });
  }

  /** The object as the server answers it: a copy, with its managedFields. */
  private render(kind: Kind, obj: Obj, fields?: FieldOwnership): Obj {
    const key = `${obj.metadata.namespace ?? ''}/${obj.metadata.name}`;
    const ownership = fields ?? kind.objects.get(key)?.fields;
    const copy = structuredClone(obj);
    const managed = ownership?.managedFields() ?? [];
    if (managed.length > 0) copy.metadata.managedFields = managed;
    return copy;
  }
}

/** The request's label and field selectors; a malformed one is the request's fault (400). */
function selectorsOf(query: Record<string, unknown>): { labels: LabelRequirement[]; fields: FieldRequirement[] } {
  try {
    return {
      labels: parseLabelSelector(query.labelSelector as string | undefined),
      fields: parseFieldSelector(query.fieldSelector as string | undefined),
    };
  } catch (err) {
    if (err instanceof SelectorSyntaxError) throw badRequest(err.message);
    throw err;
  }
}

function matchesSelectors(
  obj: Obj,
  labels: readonly LabelRequirement[],
  fields: readonly FieldRequirement[],
): boolean {
  return labelsMatch(labels, obj.metadata.labels) && fieldsMatch(fields, obj);
}

/** Everything a writer sets that is not metadata or status: a change of it is a new generation. */
function specOf(obj: Obj): unknown {
  const { metadata: _metadata, status: _status, apiVersion: _apiVersion, kind: _kind, ...spec } = obj;
  return spec;
}

/** Equal but for what every write changes (resourceVersion, managedFields). */
function sameObject(a: Obj, b: Obj): boolean {
  const strip = (o: Obj) => ({ ...o, metadata: { ...o.metadata, resourceVersion: undefined, managedFields: undefined } });
  return deepEqual(strip(a), strip(b));
}

/** An applied configuration merged over the object: objects member by member, lists and values replaced. */
function mergeApplied(current: Obj, applied: Obj): Obj {
  return applyMergePatch(current, applied) as Obj;
}

function answer(statusCode: number, value: unknown): KubeResponse {
  const text = JSON.stringify(value);
  return { statusCode, body: Object.assign(Readable.from([text]), { text: () => Promise.resolve(text) }) };
}

async function readAll(stream: Readable): Promise<string> {
  let text = '';
  for await (const chunk of stream) text += String(chunk);
  return text;
}

/** The server's clock as metadata spells it: RFC 3339 in whole seconds. */
function timestamp(): string {
  return new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** generateName's five characters, from the alphabet the real server uses. */
function suffix(): string {
  let out = '';
  for (let i = 0; i < 5; i++) out += NAME_SUFFIX_ALPHABET[Math.floor(Math.random() * NAME_SUFFIX_ALPHABET.length)];
  return out;
}

function continueToken(lastKey: string): string {
  return Buffer.from(JSON.stringify({ start: lastKey })).toString('base64');
}

function continueKey(token: string): string {
  try {
    const start = (JSON.parse(Buffer.from(token, 'base64').toString()) as { start?: unknown }).start;
    if (typeof start === 'string') return start;
  } catch {
    // Falls through to the refusal.
  }
  throw badRequest(`invalid continue token "${token}"`);
}
