import { type KubernetesObject } from '@kubernetes/client-node';
import { objectKey } from '@capstan/kube';

/**
 * The resourceVersions a controller's own writes produced, per object. A watch event carrying one of them shows
 * the controller a state it computed itself, in the reconcile that wrote it: it needs no second reconcile (a
 * write by anyone else in between would have failed the write's resourceVersion guard).
 */
export class OwnWrites {
  private readonly versions = new Map<string, string[]>();

  /** Versions kept per object: a reconcile writes at most a few times. */
  constructor(private readonly perObject = 4) {}

  record(obj: KubernetesObject): void {
    const rv = obj.metadata?.resourceVersion;
    if (!rv || !obj.metadata?.name) return;
    const key = objectKey(obj);
    const list = this.versions.get(key) ?? [];
    list.push(rv);
    if (list.length > this.perObject) list.shift();
    this.versions.set(key, list);
  }

  isOwn(obj: KubernetesObject): boolean {
    const rv = obj.metadata?.resourceVersion;
    if (!rv || !obj.metadata?.name) return false;
    return this.versions.get(objectKey(obj))?.includes(rv) ?? false;
  }

  forget(key: string): void {
    this.versions.delete(key);
  }
}
