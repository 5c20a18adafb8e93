import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  countStartupHandovers,
  FENCED,
  JOINED,
  MEMBERSHIP_CHANGED,
  RECONCILE_MOVED,
} from './startup-handovers.js';

describe('countStartupHandovers', () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'handovers-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const line = (time: number, msg: string) => JSON.stringify({ level: 30, time, msg, members: ['a'] });

  it('counts views after each replica’s first and reconciles stopped by a move, up to the first fault', () => {
    writeFileSync(
      join(dir, 'core-0.log'),
      [
        line(1_000, MEMBERSHIP_CHANGED), // the join
        line(2_000, 'reconciled'),
        line(3_000, MEMBERSHIP_CHANGED), // the other replica arrived: a hand-over
        line(3_100, RECONCILE_MOVED),
        line(3_150, FENCED),
        line(3_200, RECONCILE_MOVED),
        line(9_000, MEMBERSHIP_CHANGED), // after the first fault: not start-up
        'not json',
      ].join('\n'),
    );
    writeFileSync(join(dir, 'core-1.log'), line(2_500, MEMBERSHIP_CHANGED));
    writeFileSync(join(dir, 'notes.txt'), line(1_000, RECONCILE_MOVED));

    expect(countStartupHandovers(dir, 5_000)).toEqual({
      until: 5_000,
      viewChanges: 1,
      fences: 1,
      reconcilesMoved: 2,
      byReplica: { 'core-0': { viewChanges: 1, fences: 1, reconcilesMoved: 2 } },
    });
  });

  it('counts only the views after the join when the replica waited a join grace', () => {
    writeFileSync(
      join(dir, 'core-0.log'),
      [
        line(1_000, MEMBERSHIP_CHANGED),
        line(1_500, MEMBERSHIP_CHANGED), // the other replica seen while joining: nothing moved
        line(4_000, JOINED),
        line(6_000, MEMBERSHIP_CHANGED), // a third replica after the join: a hand-over
      ].join('\n'),
    );
    expect(countStartupHandovers(dir, 10_000)).toMatchObject({ viewChanges: 1, reconcilesMoved: 0 });
  });

  it('reports nothing for a missing log dir', () => {
    expect(countStartupHandovers(join(dir, 'absent'), 1)).toMatchObject({
      viewChanges: 0,
      reconcilesMoved: 0,
    });
  });
});
