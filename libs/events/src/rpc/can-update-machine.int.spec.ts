import { testNatsUrl } from '@capstan/testing';
import { EventBusConnection } from '../connection/event-bus-connection.js';
import { silentLogger } from '../logger.js';
import { uniqueEventTopology } from '../streams/unique-topology.js';
import {
  askCanUpdateMachine,
  CanUpdateMachineError,
  canUpdateMachineSubject,
  serveCanUpdateMachine,
  type CanUpdateMachineRequest,
} from './can-update-machine.js';

const request: CanUpdateMachineRequest = {
  machine: { namespace: 'ns', name: 'm-1' },
  bootstrapConfig: { apiGroup: 'bootstrap.capstan.dev', kind: 'K3sConfig', name: 'm-1' },
  currentVersion: 'v1.34.4',
  desiredVersion: 'v1.35.4',
  desiredConfigFrom: { apiGroup: 'bootstrap.capstan.dev', kind: 'K3sConfigTemplate', name: 'md-0' },
};

describe('can-update-machine request/reply', () => {
  const root = uniqueEventTopology('rpc').root;
  let connection: EventBusConnection;

  beforeAll(async () => {
    connection = await EventBusConnection.connect({ servers: testNatsUrl(), name: 'events-rpc' });
  });

  afterAll(async () => {
    await connection.close();
  });

  it('is answered by one responder of the queue group, on the install root only', async () => {
    const seen: string[] = [];
    const subscriptions = ['a', 'b'].map((replica) =>
      serveCanUpdateMachine(
        connection.nc,
        root,
        'K3sConfig',
        async (asked) => {
          seen.push(`${replica}:${asked.machine.name}`);
          return { inPlace: true, restart: true };
        },
        silentLogger(),
      ),
    );
    try {
      await expect(askCanUpdateMachine(connection.nc, root, request)).resolves.toEqual({ inPlace: true, restart: true });
      expect(seen).toHaveLength(1);
      // Another install's root has no responder: the asker gives up at its timeout, with the subject in the error.
      const error = await askCanUpdateMachine(connection.nc, `${root}x`, request, 300).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(CanUpdateMachineError);
      expect((error as CanUpdateMachineError).subject).toBe(canUpdateMachineSubject(`${root}x`, 'K3sConfig'));
    } finally {
      for (const subscription of subscriptions) subscription.unsubscribe();
    }
  });

  it('answers a malformed request and a failing handler with an error, and keeps serving', async () => {
    let calls = 0;
    const subscription = serveCanUpdateMachine(
      connection.nc,
      root,
      'K3sConfig',
      async () => {
        calls += 1;
        if (calls === 1) throw new Error('K3sConfig ns/m-1 is not known yet');
        return { inPlace: false, reason: 'K3sConfig spec.preK3sCommands changed', fields: ['spec.preK3sCommands'] };
      },
      silentLogger(),
    );
    try {
      const subject = canUpdateMachineSubject(root, 'K3sConfig');
      const malformed = await connection.nc.request(subject, '{"machine":1}', { timeout: 2000 });
      expect(JSON.parse(malformed.string())).toEqual({ error: 'malformed can-update-machine request' });
      await expect(askCanUpdateMachine(connection.nc, root, request)).rejects.toThrow('K3sConfig ns/m-1 is not known yet');
      await expect(askCanUpdateMachine(connection.nc, root, request)).resolves.toEqual({
        inPlace: false,
        reason: 'K3sConfig spec.preK3sCommands changed',
        fields: ['spec.preK3sCommands'],
      });
    } finally {
      subscription.unsubscribe();
    }
  });
});
