import { DEFAULT_EVENT_TOPOLOGY } from '@capstan/events';
import { EventHistory, EventHistoryUnavailableError } from './event-history.js';

// Without an event bus the timeline says why instead of failing (the replay and follow against NATS are in
// cluster-activity.int.spec.ts).

describe('EventHistory without a bus', () => {
  it('says no event bus is configured, and refuses to replay', async () => {
    const history = new EventHistory(undefined, DEFAULT_EVENT_TOPOLOGY);
    expect(history.unavailable()).toBe('no event bus configured');
    await expect(history.replay('team-a', 'demo')).rejects.toThrow(EventHistoryUnavailableError);
  });
});
