// A five-field cron schedule (minute hour day-of-month month day-of-week, UTC), as K3s's etcd-snapshot-schedule-cron
// takes it: numbers, `*`, ranges `a-b`, steps `*/n` and `a-b/n`, lists `a,b`; day-of-week 0-7 (0 and 7 are Sunday).
// When both day fields are restricted, a day matching either one matches (cron's rule).

/** A schedule that does not parse: the message names the field and what is wrong. */
export class CronScheduleError extends Error {
  override readonly name = 'CronScheduleError';
}

interface Field {
  name: string;
  min: number;
  max: number;
}

const FIELDS: readonly Field[] = [
  { name: 'minute', min: 0, max: 59 },
  { name: 'hour', min: 0, max: 23 },
  { name: 'day-of-month', min: 1, max: 31 },
  { name: 'month', min: 1, max: 12 },
  { name: 'day-of-week', min: 0, max: 7 },
];

export interface CronSchedule {
  readonly minutes: ReadonlySet<number>;
  readonly hours: ReadonlySet<number>;
  readonly days: ReadonlySet<number>;
  readonly months: ReadonlySet<number>;
  readonly weekdays: ReadonlySet<number>;
  readonly anyDay: boolean;
  readonly anyWeekday: boolean;
}

function parseField(text: string, field: Field): Set<number> {
  const values = new Set<number>();
  for (const part of text.split(',')) {
    const match = /^(\*|(\d+)(?:-(\d+))?)(?:\/(\d+))?$/.exec(part);
    if (!match) throw new CronScheduleError(`${field.name} "${part}" is not a number, range, list or step`);
    const [, , first, last, stepText] = match;
    const from = first === undefined ? field.min : Number(first);
    const to =
      first === undefined ? field.max : last === undefined ? (stepText ? field.max : from) : Number(last);
    const step = stepText === undefined ? 1 : Number(stepText);
    if (from < field.min || to > field.max || from > to) {
      throw new CronScheduleError(`${field.name} "${part}" is outside ${field.min}-${field.max}`);
    }
    if (step < 1) throw new CronScheduleError(`${field.name} "${part}" has a step below 1`);
    for (let v = from; v <= to; v += step) values.add(field.name === 'day-of-week' && v === 7 ? 0 : v);
  }
  return values;
}

export function parseCronSchedule(expression: string): CronSchedule {
  const parts = expression.trim().split(/\s+/);
  if (parts.length !== 5) {
    throw new CronScheduleError(
      `"${expression.slice(0, 64)}" has ${parts.length} fields; a schedule has five: minute hour day-of-month month day-of-week`,
    );
  }
  const [minutes, hours, days, months, weekdays] = parts.map((part, i) => parseField(part!, FIELDS[i]!)) as [
    Set<number>,
    Set<number>,
    Set<number>,
    Set<number>,
    Set<number>,
  ];
  return { minutes, hours, days, months, weekdays, anyDay: parts[2] === '*', anyWeekday: parts[4] === '*' };
}

function dayMatches(schedule: CronSchedule, at: Date): boolean {
  const day = schedule.days.has(at.getUTCDate());
  const weekday = schedule.weekdays.has(at.getUTCDay());
  if (schedule.anyDay && schedule.anyWeekday) return true;
  if (schedule.anyDay) return weekday;
  if (schedule.anyWeekday) return day;
  return day || weekday;
}

/** The first minute strictly after `after` that the schedule names, within five years (else undefined). */
export function nextCronTime(schedule: CronSchedule, after: Date): Date | undefined {
  const at = new Date(after.getTime());
  at.setUTCSeconds(0, 0);
  at.setUTCMinutes(at.getUTCMinutes() + 1);
  const limit = after.getTime() + 5 * 366 * 24 * 3600_000;
  while (at.getTime() <= limit) {
    if (!schedule.months.has(at.getUTCMonth() + 1)) {
      at.setUTCMonth(at.getUTCMonth() + 1, 1);
      at.setUTCHours(0, 0);
    } else if (!dayMatches(schedule, at)) {
      at.setUTCDate(at.getUTCDate() + 1);
      at.setUTCHours(0, 0);
    } else if (!schedule.hours.has(at.getUTCHours())) {
      at.setUTCHours(at.getUTCHours() + 1, 0);
    } else if (!schedule.minutes.has(at.getUTCMinutes())) {
      at.setUTCMinutes(at.getUTCMinutes() + 1);
    } else {
      return at;
    }
  }
  return undefined;
}
