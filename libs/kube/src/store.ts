import type { KubernetesObject } from '@kubernetes/client-node';
import type { IndexFunc } from './indexers.js';
import { objectKey } from './keys.js';

/** The informer's read cache: objects by key, plus secondary indexes kept in step with every write. */
export class Store<T extends KubernetesObject = KubernetesObject> {
  private readonly objects = new Map<string, T>();
  private readonly indexers = new Map<string, IndexFunc<T>>();
  /** index name -> index value -> keys */
  private readonly indices = new Map<string, Map<string, Set<string>>>();

  get size(): number {
    return this.objects.size;
  }

  get(key: string): T | undefined {
    return this.objects.get(key);
  }

  keys(): string[] {
    return [...this.objects.keys()];
  }

  list(namespace?: string): T[] {
    const all = [...this.objects.values()];
    return namespace === undefined ? all : all.filter((o) => o.metadata?.namespace === namespace);
  }

  /** Adds (or replaces) an index and files every cached object under it. */
  addIndexer(name: string, fn: IndexFunc<T>): void {
    this.indexers.set(name, fn);
    const index = new Map<string, Set<string>>();
    this.indices.set(name, index);
    for (const [key, obj] of this.objects) fileUnder(index, fn(obj), key);
  }

  hasIndexer(name: string): boolean {
    return this.indexers.has(name);
  }

  byIndex(name: string, value: string): T[] {
    const index = this.indices.get(name);
    if (!index) throw new TypeError(`no index named ${name}`);
    const keys = index.get(value);
    if (!keys) return [];
    const out: T[] = [];
    for (const key of keys) {
      const obj = this.objects.get(key);
      if (obj) out.push(obj);
    }
    return out;
  }

  /** Returns the previous object under the same key. */
  upsert(obj: T): T | undefined {
    const key = objectKey(obj);
    const previous = this.objects.get(key);
    if (previous) this.unindex(key, previous);
    this.objects.set(key, obj);
    for (const [name, fn] of this.indexers) fileUnder(this.indices.get(name)!, fn(obj), key);
    return previous;
  }

  delete(key: string): T | undefined {
    const previous = this.objects.get(key);
    if (!previous) return undefined;
    this.unindex(key, previous);
    this.objects.delete(key);
    return previous;
  }

  private unindex(key: string, obj: T): void {
    for (const [name, fn] of this.indexers) {
      const index = this.indices.get(name)!;
      for (const value of fn(obj)) {
        const keys = index.get(value);
        keys?.delete(key);
        if (keys?.size === 0) index.delete(value);
      }
    }
  }
}

function fileUnder(index: Map<string, Set<string>>, values: string[], key: string): void {
  for (const value of values) {
    let keys = index.get(value);
    if (!keys) index.set(value, (keys = new Set()));
    keys.add(key);
  }
}
