import type { KubernetesObject } from '@kubernetes/client-node';
import pino from 'pino';
import { EventOutbox, type OwedEvent } from './event-outbox.js';

const log = pino({ level: 'silent' });

/** An owed event naming `obj` (the data's shape does not matter to the outbox: it only carries it). */
const owed = (obj: KubernetesObject, name: OwedEvent['name']): OwedEvent =>
  ({ name, data: { object: { kind: obj.kind, name: obj.metadata!.name } } }) as unknown as OwedEvent;

describe('EventOutbox', () => {
  it('keeps the owed events of two kinds apart when their objects share a namespace and name', async () => {
    let busUp = false;
    const published: string[] = [];
    const outbox = new EventOutbox({
      publisher: {
        publish: ((name: string, data: { object: { kind: string } }) =>
          busUp
            ? Promise.resolve(published.push(`${data.object.kind} ${name}`))
            : Promise.reject(new Error('no responders'))) as never,
      },
      logger: log,
    });
    const cluster = { apiVersion: 'cluster.x-k8s.io/v1beta2', kind: 'Cluster', metadata: { namespace: 'ns', name: 'same' } };
    const machine = { apiVersion: 'cluster.x-k8s.io/v1beta2', kind: 'Machine', metadata: { namespace: 'ns', name: 'same' } };
    // Both are gone (no client to record on): what they are owed stays in memory.
    expect(await outbox.publish(undefined, cluster, [owed(cluster, 'cluster.deleted')])).toBe(false);
    expect(await outbox.publish(undefined, machine, [owed(machine, 'machine.deleted')])).toBe(false);
    expect(outbox.inMemorySize).toBe(2);

    busUp = true;
    expect(await outbox.flushGone('Machine', 'ns/same')).toBe(true);
    expect(published).toEqual(['Machine machine.deleted']);
    expect(await outbox.flushGone('Cluster', 'ns/same')).toBe(true);
    expect(published).toEqual(['Machine machine.deleted', 'Cluster cluster.deleted']);
    expect(outbox.inMemorySize).toBe(0);
  });
});
