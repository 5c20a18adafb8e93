import type { KubernetesObject } from '@kubernetes/client-node';
import {
  AlreadyOwnedError,
  getControllerOf,
  hasOwnerReference,
  isControlledBy,
  removeOwnerReference,
  setControllerReference,
  setOwnerReference,
} from './owner-references.js';

const obj = (kind: string, name: string, uid: string, namespace = 'ns'): KubernetesObject => ({
  apiVersion: 'cluster.x-k8s.io/v1beta2',
  kind,
  metadata: { namespace, name, uid },
});

describe('owner references', () => {
  it('set a controller reference with blockOwnerDeletion, once, however often it is set', () => {
    const owner = obj('MachineSet', 'ms', 'u1');
    const child = obj('Machine', 'm', 'u2');
    setControllerReference(owner, child);
    setControllerReference({ ...owner, apiVersion: 'cluster.x-k8s.io/v1beta1' }, child);
    expect(child.metadata?.ownerReferences).toHaveLength(1);
    expect(getControllerOf(child)).toMatchObject({
      kind: 'MachineSet',
      name: 'ms',
      uid: 'u1',
      controller: true,
      blockOwnerDeletion: true,
    });
    expect(isControlledBy(child, owner)).toBe(true);
  });

  it('refuse a second controller', () => {
    const child = obj('Machine', 'm', 'u2');
    setControllerReference(obj('MachineSet', 'ms', 'u1'), child);
    expect(() => setControllerReference(obj('MachineSet', 'other', 'u3'), child)).toThrow(AlreadyOwnedError);
  });

  it('add plain owners beside the controller without duplicates, and never demote the controller', () => {
    const child = obj('Machine', 'm', 'u2');
    const controller = obj('MachineSet', 'ms', 'u1');
    const cluster = obj('Cluster', 'c', 'u9');
    setControllerReference(controller, child);
    setOwnerReference(cluster, child);
    setOwnerReference(cluster, child);
    setOwnerReference(controller, child);
    expect(child.metadata?.ownerReferences).toHaveLength(2);
    expect(getControllerOf(child)?.uid).toBe('u1');
    expect(hasOwnerReference(cluster, child)).toBe(true);
    expect(isControlledBy(child, cluster)).toBe(false);
    expect(removeOwnerReference(cluster, child)).toBe(true);
    expect(hasOwnerReference(cluster, child)).toBe(false);
    expect(removeOwnerReference(cluster, child)).toBe(false);
  });

  it('refuse cross-namespace owners and owners without a uid', () => {
    expect(() => setOwnerReference(obj('Cluster', 'c', 'u1', 'a'), obj('Machine', 'm', 'u2', 'b'))).toThrow(
      TypeError,
    );
    expect(() =>
      setOwnerReference(
        { ...obj('Cluster', 'c', ''), metadata: { name: 'c', namespace: 'ns' } },
        obj('Machine', 'm', 'u2'),
      ),
    ).toThrow(TypeError);
    // A cluster-scoped owner may own namespaced objects.
    expect(() =>
      setOwnerReference(
        { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'ns', uid: 'n' } },
        obj('Machine', 'm', 'u2'),
      ),
    ).not.toThrow();
  });
});
