import { InvalidEventError, SecretLikePayloadError } from '../errors.js';
import { EVENT_CATALOGUE, EVENT_NAMES, EVENT_TYPES, eventDefinitionByType } from './catalogue.js';
import { CloudEvent } from './cloud-event.js';
import { decodeEvent, encodeEvent, eventMessageId } from './event-codec.js';
import { BootstrapDataSecretCreatedData } from './handoff-events.js';
import { dataSecretCreated } from '../../test/fixtures.js';

const source = '/capstan/bootstrap-provider';
const encode = (value: object) => new TextEncoder().encode(JSON.stringify(value));

describe('event codec', () => {
  it('encodes subject, message id and a CloudEvents 1.0 envelope', () => {
    const time = new Date('2026-11-21T10:00:00.000Z');
    const encoded = encodeEvent('bootstrap.data-secret-created', dataSecretCreated(), { source, time });
    expect(encoded.subject).toBe('capstan.handoff.k3sconfig.default.demo-md-0-x7k2p.data-secret-created');
    expect(encoded.msgId).toBe('6f1c1b7e-3b0e-4a53-9d2e-1a2b3c4d5e6f:4711:data-secret-created');
    expect(JSON.parse(new TextDecoder().decode(encoded.payload))).toEqual({
      specversion: '1.0',
      id: encoded.msgId,
      source,
      type: 'dev.capstan.handoff.bootstrap.data-secret-created',
      subject: 'default/demo-md-0-x7k2p',
      time: '2026-11-21T10:00:00.000Z',
      datacontenttype: 'application/json',
      data: dataSecretCreated(),
    });
  });

  it('decodes what it encodes into typed instances', () => {
    const encoded = encodeEvent('bootstrap.data-secret-created', dataSecretCreated(), {
      source,
      root: 't-1',
    });
    const decoded = decodeEvent(encoded.payload, { subject: encoded.subject, root: 't-1' });
    expect(decoded).toBeInstanceOf(CloudEvent);
    expect(decoded.data).toBeInstanceOf(BootstrapDataSecretCreatedData);
    expect(decoded.type).toBe('dev.capstan.handoff.bootstrap.data-secret-created');
    expect(decoded.data).toEqual(expect.objectContaining(dataSecretCreated()));
  });

  it('refuses invalid data on publish with the field path', () => {
    const bad = dataSecretCreated({ resourceVersion: '1:2' });
    expect(() => encodeEvent('bootstrap.data-secret-created', bad, { source })).toThrow(
      /data.resourceVersion/,
    );
    const missing = { ...dataSecretCreated(), dataSecretName: undefined } as never;
    expect(() => encodeEvent('bootstrap.data-secret-created', missing, { source })).toThrow(
      InvalidEventError,
    );
  });

  it('refuses unknown fields on publish', () => {
    const extra = { ...dataSecretCreated(), surprise: 1 };
    expect(() => encodeEvent('bootstrap.data-secret-created', extra, { source })).toThrow(/surprise/);
  });

  it('refuses a secret before anything else', () => {
    const leaking = { ...dataSecretCreated(), bootstrapToken: 'abc' };
    expect(() => encodeEvent('bootstrap.data-secret-created', leaking, { source })).toThrow(
      SecretLikePayloadError,
    );
  });

  it('refuses a lifecycle event about the wrong kind', () => {
    const { object, generation, resourceVersion, clusterName } = dataSecretCreated();
    const data = {
      object,
      generation,
      resourceVersion,
      clusterName,
      phase: 'Provisioning',
      controlPlane: false,
    };
    expect(() => encodeEvent('machine.provisioning', data as never, { source })).toThrow(
      /must be about a Machine/,
    );
  });

  it('refuses an oversized event', () => {
    const data = dataSecretCreated();
    expect(() =>
      encodeEvent('bootstrap.data-secret-created', data, { source, maxPayloadBytes: 100 }),
    ).toThrow(expect.objectContaining({ reason: 'oversized' }));
  });

  const valid = () =>
    JSON.parse(
      new TextDecoder().decode(
        encodeEvent('bootstrap.data-secret-created', dataSecretCreated(), { source }).payload,
      ),
    );

  it.each([
    ['not-json', new TextEncoder().encode('{not json')],
    ['not-json', new Uint8Array([0xff, 0xfe, 0x7b, 0x7d])],
    ['not-json', encode([1, 2])],
    ['unknown-type', encode({ ...valid(), type: 'dev.capstan.handoff.nope' })],
    ['validation-failed', encode({ ...valid(), specversion: '0.3' })],
    ['validation-failed', encode({ ...valid(), time: 'yesterday' })],
    ['validation-failed', encode({ ...valid(), data: 'text' })],
    ['validation-failed', encode({ ...valid(), data: { ...valid().data, generation: -1 } })],
    ['validation-failed', encode({ ...valid(), data: { ...valid().data, object: { kind: 'K3sConfig' } } })],
    ['secret-like', encode({ ...valid(), data: { ...valid().data, kubeconfig: 'x' } })],
    ['oversized', encode({ ...valid(), padding: 'x'.repeat(70_000) })],
  ])('decode rejects with reason %s', (reason, payload) => {
    expect(() => decodeEvent(payload)).toThrow(expect.objectContaining({ reason }));
  });

  it('decode tolerates unknown fields (newer publishers)', () => {
    const decoded = decodeEvent(
      encode({ ...valid(), extension: 'x', data: { ...valid().data, newField: 1 } }),
    );
    expect(decoded.data).toBeInstanceOf(BootstrapDataSecretCreatedData);
    expect(decoded).not.toHaveProperty('extension');
  });

  it('decode is not confused by a __proto__ key', () => {
    const payload = new TextEncoder().encode(
      JSON.stringify(valid()).replace('{', '{"__proto__":{"specversion":"0.3"},'),
    );
    expect(Object.getPrototypeOf(decodeEvent(payload))).toBe(CloudEvent.prototype);
  });

  it('decode refuses a subject that names another object or event', () => {
    const encoded = encodeEvent('bootstrap.data-secret-created', dataSecretCreated(), { source });
    const other = encoded.subject.replace('demo-md-0-x7k2p', 'other');
    expect(() => decodeEvent(encoded.payload, { subject: other })).toThrow(/does not name/);
    expect(() => decodeEvent(encoded.payload, { subject: 'capstan.handoff.x' })).toThrow(InvalidEventError);
  });

  it('builds message ids as <uid>:<resourceVersion>:<event>', () => {
    expect(eventMessageId('u', '7', 'deleted')).toBe('u:7:deleted');
  });
});

describe('event catalogue', () => {
  it('has every hand-off and lifecycle event of the design', () => {
    expect(EVENT_NAMES.sort()).toEqual(
      [
        'infrastructure-cluster.provisioned',
        'infrastructure-cluster.deleted',
        'bootstrap.data-secret-created',
        'infrastructure-machine.provisioned',
        'infrastructure-machine.failed',
        'infrastructure-machine.deleted',
        'control-plane.initialized',
        'control-plane.available',
        'control-plane.scaled',
        'cluster.created',
        'cluster.provisioned',
        'cluster.available',
        'cluster.deleting',
        'cluster.deleted',
        'machine.provisioning',
        'machine.provisioned',
        'machine.running',
        'machine.unhealthy',
        'machine.updated',
        'machine.remediated',
        'machine.deleting',
        'machine.deleted',
        'machine-plan.applied',
        'machine-plan.failed',
        'machine-plan.probes-healthy',
      ].sort(),
    );
  });

  it('derives type, source and event token from the name', () => {
    const definition = EVENT_CATALOGUE['bootstrap.data-secret-created'];
    expect(definition).toMatchObject({
      source: 'handoff',
      role: 'bootstrap',
      event: 'data-secret-created',
      type: 'dev.capstan.handoff.bootstrap.data-secret-created',
    });
    expect(EVENT_CATALOGUE['machine.unhealthy'].type).toBe('dev.capstan.lifecycle.machine.unhealthy');
    expect(new Set(EVENT_TYPES).size).toBe(EVENT_NAMES.length);
    for (const type of EVENT_TYPES) expect(eventDefinitionByType(type)?.type).toBe(type);
  });
});
