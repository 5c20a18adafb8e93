import { InvalidSubjectError } from '../errors.js';
import {
  buildEventSubject,
  decodeNameToken,
  encodeNameToken,
  parseEventSubject,
  type EventSubjectParts,
} from './event-subject.js';
import { deadLetterFilter, deadLetterSubject, eventStreamSubjects } from './dead-letter-subject.js';

describe('event subjects', () => {
  const parts: EventSubjectParts = {
    source: 'handoff',
    kind: 'k3sconfig',
    namespace: 'default',
    name: 'demo-md-0-x7k2p',
    event: 'data-secret-created',
  };

  it('builds the documented example', () => {
    expect(buildEventSubject(parts)).toBe(
      'capstan.handoff.k3sconfig.default.demo-md-0-x7k2p.data-secret-created',
    );
    expect(
      buildEventSubject({
        source: 'lifecycle',
        kind: 'Cluster',
        namespace: 'default',
        name: 'demo',
        event: 'available',
      }),
    ).toBe('capstan.lifecycle.cluster.default.demo.available');
  });

  it('writes a dotted name with underscores and reads it back', () => {
    const dotted = { ...parts, name: 'node.example.com' };
    const subject = buildEventSubject(dotted);
    expect(subject).toBe('capstan.handoff.k3sconfig.default.node_example_com.data-secret-created');
    expect(parseEventSubject(subject)).toEqual(dotted);
    expect(encodeNameToken('a.b')).toBe('a_b');
    expect(decodeNameToken('a_b')).toBe('a.b');
  });

  it.each([
    parts,
    { source: 'lifecycle', kind: 'machine', namespace: 'kube-system', name: 'm-1', event: 'unhealthy' },
    { source: 'handoff', kind: 'simcluster', namespace: 'a', name: 'x.y.z', event: 'provisioned' },
  ] as EventSubjectParts[])('round-trips %j', (p) => {
    expect(parseEventSubject(buildEventSubject(p))).toEqual(p);
    expect(parseEventSubject(buildEventSubject(p, 't-1'), 't-1')).toEqual(p);
  });

  it('lower-cases the kind when building', () => {
    expect(parseEventSubject(buildEventSubject({ ...parts, kind: 'K3sConfig' })).kind).toBe('k3sconfig');
  });

  it.each([
    ['source', { ...parts, source: 'other' as never }],
    ['kind with a dash', { ...parts, kind: 'k3s-config' }],
    ['kind starting with a digit', { ...parts, kind: '3config' }],
    ['namespace with upper case', { ...parts, namespace: 'Default' }],
    ['namespace too long', { ...parts, namespace: 'a'.repeat(64) }],
    ['name with an underscore', { ...parts, name: 'a_b' }],
    ['name with a wildcard', { ...parts, name: '*' }],
    ['empty name', { ...parts, name: '' }],
    ['name with an empty label', { ...parts, name: 'a..b' }],
    ['event with a dot', { ...parts, event: 'data.created' }],
    ['event with upper case', { ...parts, event: 'Created' }],
    ['event with a wildcard', { ...parts, event: '>' }],
  ])('refuses a %s', (_what, bad) => {
    expect(() => buildEventSubject(bad)).toThrow(InvalidSubjectError);
  });

  it('refuses an invalid root', () => {
    expect(() => buildEventSubject(parts, 'Cap.stan')).toThrow(InvalidSubjectError);
  });

  it.each([
    ['too few tokens', 'capstan.handoff.k3sconfig.default.demo'],
    ['too many tokens', 'capstan.handoff.k3sconfig.default.demo.x.provisioned'],
    ['another root', 'other.handoff.k3sconfig.default.demo.provisioned'],
    ['an unknown source', 'capstan.dlq.k3sconfig.default.demo.provisioned'],
    ['an upper-case kind', 'capstan.handoff.K3sConfig.default.demo.provisioned'],
    ['a wildcard', 'capstan.handoff.*.default.demo.provisioned'],
    ['an empty token', 'capstan.handoff..default.demo.provisioned'],
    ['a name starting with an underscore', 'capstan.handoff.k3sconfig.default._demo.provisioned'],
  ])('parse refuses %s', (_what, subject) => {
    expect(() => parseEventSubject(subject)).toThrow(InvalidSubjectError);
  });

  it('maps a subject to its dead-letter subject', () => {
    expect(deadLetterSubject('capstan.handoff.k3sconfig.default.x.data-secret-created')).toBe(
      'capstan.dlq.handoff.k3sconfig.default.x.data-secret-created',
    );
    expect(deadLetterSubject('t-1.lifecycle.cluster.a.b.created', 't-1')).toBe(
      't-1.dlq.lifecycle.cluster.a.b.created',
    );
    expect(deadLetterSubject('elsewhere.x', 't-1')).toBe('t-1.dlq.foreign.elsewhere.x');
    expect(deadLetterFilter()).toBe('capstan.dlq.>');
  });

  it('keeps the event stream subjects apart from the dead letters', () => {
    expect(eventStreamSubjects()).toEqual(['capstan.handoff.>', 'capstan.lifecycle.>']);
  });
});
