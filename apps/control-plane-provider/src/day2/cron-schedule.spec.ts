import { CronScheduleError, nextCronTime, parseCronSchedule } from './cron-schedule.js';

const next = (expression: string, after: string) =>
  nextCronTime(parseCronSchedule(expression), new Date(after))?.toISOString();

describe('cron schedules of etcd snapshots', () => {
  it("takes K3s's default, steps, ranges and lists", () => {
    expect(next('0 */12 * * *', '2026-11-28T10:37:00Z')).toBe('2026-11-28T12:00:00.000Z');
    expect(next('0 */12 * * *', '2026-11-28T12:00:00Z')).toBe('2026-11-29T00:00:00.000Z');
    expect(next('*/5 * * * *', '2026-11-28T10:37:30Z')).toBe('2026-11-28T10:40:00.000Z');
    expect(next('* * * * *', '2026-11-28T10:37:30Z')).toBe('2026-11-28T10:38:00.000Z');
    expect(next('15 2,14 * * *', '2026-11-28T03:00:00Z')).toBe('2026-11-28T14:15:00.000Z');
    expect(next('0 0 1 1 *', '2026-11-28T00:00:00Z')).toBe('2027-01-01T00:00:00.000Z');
    expect(next('30 9 * * 1-5', '2026-11-28T10:00:00Z')).toBe('2026-11-30T09:30:00.000Z'); // Saturday -> Monday
    expect(next('0 0 * * 7', '2026-11-28T10:00:00Z')).toBe('2026-11-29T00:00:00.000Z'); // 7 is Sunday
    expect(next('0 0 31 2 *', '2026-11-28T10:00:00Z')).toBeUndefined(); // never
  });

  it('matches either day field when both are restricted, as cron does', () => {
    // The 1st of the month or any Monday: Monday 30 November comes first.
    expect(next('0 0 1 * 1', '2026-11-28T10:00:00Z')).toBe('2026-11-30T00:00:00.000Z');
  });

  it('refuses what does not parse, naming the field', () => {
    expect(() => parseCronSchedule('0 */12 * *')).toThrow('has 4 fields');
    expect(() => parseCronSchedule('61 * * * *')).toThrow('minute "61" is outside 0-59');
    expect(() => parseCronSchedule('0 0 * * mon')).toThrow('day-of-week "mon"');
    expect(() => parseCronSchedule('*/0 * * * *')).toThrow(CronScheduleError);
  });
});
