import type { Cluster } from '@capstan/api';
import type { HookName } from '../../runtime/runtime-hooks.js';
import {
  OK_TO_DELETE_ANNOTATION,
  PENDING_HOOKS_ANNOTATION,
  setPending,
  TopologyHooks,
  type LifecycleHookCaller,
} from './topology-hooks.js';

// The hooks' bookkeeping on the Cluster; the calls themselves go to real HTTPS extensions in topology.int.spec.ts
// and apps/core/src/runtime/runtime-sdk.int.spec.ts. This caller records what would be sent and answers as told.
describe('TopologyHooks', () => {
  const cluster = (annotations: Record<string, string> = {}): Cluster =>
    ({
      apiVersion: 'cluster.x-k8s.io/v1beta2',
      kind: 'Cluster',
      metadata: { name: 'c', namespace: 'fleet', annotations, managedFields: [{ manager: 'x' }] },
      spec: { topology: { classRef: { name: 'k' }, version: 'v1.34.4' } },
    }) as unknown as Cluster;
  const caller = (retryAfterSeconds: number) => {
    const calls: { hook: HookName; body: Record<string, unknown> }[] = [];
    const call: LifecycleHookCaller = {
      callAll: async (hook, _target, body) => {
        calls.push({ hook, body: body as Record<string, unknown> });
        return { retryAfterSeconds, message: 'maintenance window' };
      },
    };
    return { call, calls };
  };

  it('lets a deleted Cluster go only once BeforeClusterDelete stops blocking, and then not again', async () => {
    const blocking = caller(30);
    const c = cluster();
    expect(await new TopologyHooks(blocking.call).beforeClusterDelete(c)).toMatchObject({
      hook: 'BeforeClusterDelete',
      retryAfterSeconds: 30,
    });
    expect(c.metadata.annotations?.[OK_TO_DELETE_ANNOTATION]).toBeUndefined();
    // The hook receives the Cluster without the server's bookkeeping.
    expect((blocking.calls[0]!.body['cluster'] as Cluster).metadata).not.toHaveProperty('managedFields');

    const released = caller(0);
    expect(await new TopologyHooks(released.call).beforeClusterDelete(c)).toBeUndefined();
    expect(c.metadata.annotations?.[OK_TO_DELETE_ANNOTATION]).toBe('');
    await new TopologyHooks(released.call).beforeClusterDelete(c);
    expect(released.calls).toHaveLength(1);
  });

  it('keeps the pending hooks sorted in one annotation, and removes it when none is left', () => {
    const c = cluster();
    setPending(c, ['AfterClusterUpgrade', 'AfterControlPlaneUpgrade']);
    expect(c.metadata.annotations?.[PENDING_HOOKS_ANNOTATION]).toBe(
      'AfterClusterUpgrade,AfterControlPlaneUpgrade',
    );
    setPending(c, [], ['AfterClusterUpgrade', 'AfterControlPlaneUpgrade']);
    expect(c.metadata.annotations).not.toHaveProperty(PENDING_HOOKS_ANNOTATION);
  });

  it('calls nothing without a Runtime SDK client', async () => {
    const c = cluster();
    expect(await new TopologyHooks(undefined).beforeClusterDelete(c)).toBeUndefined();
    expect(c.metadata.annotations?.[OK_TO_DELETE_ANNOTATION]).toBe('');
  });
});
