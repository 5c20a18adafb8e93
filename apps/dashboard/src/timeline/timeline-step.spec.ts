import { decodeEvent, encodeEvent, EVENT_NAMES } from '@capstan/events';
import { TIMELINE_STEPS, timelineStep } from './timeline-step.js';

// The hand-off timeline: each catalogued event marks one step, and events about a Machine (or a provider object serving
// one) name that Machine.

const base = (kind: string, name: string, apiGroup = 'cluster.x-k8s.io') => ({
  object: { apiGroup, kind, namespace: 'team-a', name, uid: '6f1c1b7e-3b0e-4a53-9d2e-1a2b3c4d5e6f' },
  generation: 1,
  resourceVersion: '42',
  clusterName: 'demo',
});

describe('timelineStep', () => {
  it('has a step for every event of the catalogue', () => {
    for (const name of EVENT_NAMES) expect(TIMELINE_STEPS[name]).toMatch(/^[a-z]+(-[a-z]+)*$/);
  });

  it("names the machine of a provider's hand-off and of a Machine's lifecycle event", () => {
    const bootstrap = encodeEvent(
      'bootstrap.data-secret-created',
      {
        ...base('K3sConfig', 'demo-md-0-x7k2p', 'bootstrap.capstan.dev'),
        dataSecretName: 'demo-md-0-x7k2p',
        machineName: 'demo-md-0-abcde',
      },
      { source: '/capstan/test', time: new Date('2026-11-29T10:00:00Z') },
    );
    expect(timelineStep(decodeEvent(bootstrap.payload))).toEqual({
      id: bootstrap.msgId,
      machine: 'demo-md-0-abcde',
      object: { kind: 'K3sConfig', name: 'demo-md-0-x7k2p' },
      step: 'bootstrap-data',
      time: '2026-11-29T10:00:00.000Z',
      type: 'dev.capstan.handoff.bootstrap.data-secret-created',
    });
    const running = encodeEvent(
      'machine.running',
      {
        ...base('Machine', 'demo-md-0-abcde'),
        phase: 'Running',
        controlPlane: false,
        providerID: 'sim://demo-md-0-abcde',
        nodeName: 'demo-md-0-abcde',
      },
      { source: '/capstan/test' },
    );
    expect(timelineStep(decodeEvent(running.payload))).toMatchObject({
      machine: 'demo-md-0-abcde',
      step: 'node-ready',
    });
    const initialized = encodeEvent(
      'control-plane.initialized',
      base('K3sControlPlane', 'demo', 'controlplane.capstan.dev'),
      { source: '/capstan/test' },
    );
    const step = timelineStep(decodeEvent(initialized.payload));
    expect(step).toMatchObject({ step: 'control-plane-initialized', object: { kind: 'K3sControlPlane' } });
    expect(step.machine).toBeUndefined();
  });
});
