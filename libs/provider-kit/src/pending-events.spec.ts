import { PendingEvents } from './pending-events.js';

describe('PendingEvents', () => {
  it('keeps a failed publish owed and sends it on the next flush of that key only', async () => {
    const pending = new PendingEvents();
    const sent: string[] = [];
    let fail = true;
    const send = (what: string) => async () => {
      if (fail) throw new Error('bus down');
      sent.push(what);
    };
    await expect(pending.publish('ns/a', 'created', send('a'))).rejects.toThrow('bus down');
    fail = false;
    await pending.flush('ns/b');
    expect(sent).toEqual([]);
    await pending.flush('ns/a');
    expect(sent).toEqual(['a']);
    await pending.flush('ns/a');
    expect(sent).toEqual(['a']);
  });
});
