import { InvalidSubjectError } from '../errors.js';
import { buildEventSubject } from './event-subject.js';
import {
  eventsInNamespace,
  eventsNamed,
  eventsOfKind,
  eventsOfObject,
  eventSubjectFilter,
  handoffEvents,
  lifecycleEvents,
} from './subject-filters.js';
import { isValidSubjectPattern, subjectCovers, subjectMatches } from './subject-match.js';

describe('subject filters', () => {
  it('folds trailing wildcards into >', () => {
    expect(eventSubjectFilter()).toBe('capstan.>');
    expect(handoffEvents()).toBe('capstan.handoff.>');
    expect(lifecycleEvents('t-1')).toBe('t-1.lifecycle.>');
    expect(eventsOfKind('Machine', 'lifecycle')).toBe('capstan.lifecycle.machine.>');
    expect(eventsOfKind('SimMachine')).toBe('capstan.*.simmachine.>');
    expect(eventsNamed('provisioned', 'handoff')).toBe('capstan.handoff.*.*.*.provisioned');
    expect(eventsInNamespace('team-a')).toBe('capstan.*.*.team-a.>');
    expect(eventsOfObject('Cluster', 'default', 'a.b')).toBe('capstan.*.cluster.default.a_b.>');
  });

  it('filters match exactly the subjects they select', () => {
    const provisioned = buildEventSubject({
      source: 'handoff',
      kind: 'SimMachine',
      namespace: 'ns',
      name: 'm',
      event: 'provisioned',
    });
    const deleted = buildEventSubject({
      source: 'handoff',
      kind: 'SimMachine',
      namespace: 'ns',
      name: 'm',
      event: 'deleted',
    });
    const lifecycle = buildEventSubject({
      source: 'lifecycle',
      kind: 'Machine',
      namespace: 'other',
      name: 'm',
      event: 'provisioned',
    });
    const filter = eventsNamed('provisioned', 'handoff');
    expect(subjectMatches(filter, provisioned)).toBe(true);
    expect(subjectMatches(filter, deleted)).toBe(false);
    expect(subjectMatches(filter, lifecycle)).toBe(false);
    expect(subjectMatches(eventsInNamespace('ns'), provisioned)).toBe(true);
    expect(subjectMatches(eventsInNamespace('ns'), lifecycle)).toBe(false);
    expect(subjectMatches(eventsNamed('provisioned'), lifecycle)).toBe(true);
  });

  it('refuses invalid selector tokens', () => {
    expect(() => eventSubjectFilter({ namespace: 'A' })).toThrow(InvalidSubjectError);
    expect(() => eventSubjectFilter({ event: '*' })).toThrow(InvalidSubjectError);
    expect(() => eventSubjectFilter({ kind: 'a.b' })).toThrow(InvalidSubjectError);
  });
});

describe('NATS wildcard matching', () => {
  it.each([
    ['a.b.c', 'a.b.c', true],
    ['a.*.c', 'a.b.c', true],
    ['a.*', 'a.b.c', false],
    ['a.>', 'a.b.c', true],
    ['a.>', 'a', false],
    ['a.b.>', 'a.b.c.d.e', true],
    ['*.b.>', 'x.b.c', true],
    ['*.*.*', 'a.b', false],
    ['a.b.c', 'a.b', false],
    ['a.b', 'a.b.c', false],
    ['>', 'a', true],
    ['a.>.c', 'a.b.c', false],
  ])('%s matches %s: %s', (pattern, subject, expected) => {
    expect(subjectMatches(pattern, subject)).toBe(expected);
  });

  it.each([
    ['capstan.>', 'capstan.handoff.>', true],
    ['capstan.handoff.>', 'capstan.>', false],
    ['capstan.handoff.>', 'capstan.handoff.*.*.*.provisioned', true],
    ['capstan.*.x', 'capstan.a.x', true],
    ['capstan.a.x', 'capstan.*.x', false],
    ['capstan.>', 'capstan', false],
  ])('%s covers %s: %s', (outer, inner, expected) => {
    expect(subjectCovers(outer, inner)).toBe(expected);
  });

  it('validates patterns', () => {
    expect(isValidSubjectPattern('capstan.handoff.>')).toBe(true);
    expect(isValidSubjectPattern('capstan..x')).toBe(false);
    expect(isValidSubjectPattern('capstan.>.x')).toBe(false);
    expect(isValidSubjectPattern('cap stan')).toBe(false);
    expect(isValidSubjectPattern('')).toBe(false);
  });
});

describe('cluster events', () => {
  it('filters by namespace on the server and by cluster name in the handler', async () => {
    const { clusterEvents } = await import('./cluster-events.js');
    const selector = clusterEvents('team-a', 'demo');
    expect(selector.filterSubject).toBe('capstan.*.*.team-a.>');
    const event = (namespace: string, clusterName: string) =>
      ({ data: { clusterName, object: { namespace } } }) as Parameters<typeof selector.matches>[0];
    expect(selector.matches(event('team-a', 'demo'))).toBe(true);
    expect(selector.matches(event('team-a', 'other'))).toBe(false);
    expect(selector.matches(event('team-b', 'demo'))).toBe(false);
  });
});
