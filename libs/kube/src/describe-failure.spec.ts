import { ReconcileTimeoutError } from './controller.js';
import { describeFailure } from './describe-failure.js';
import { KubeApiError, KubeTransportError } from './errors.js';

describe('describeFailure', () => {
  it('names the call and status of an API error, never the server message (it can quote the object)', () => {
    const error = new KubeApiError(
      'PATCH',
      '/api/v1/namespaces/ns/secrets/s',
      { reason: 'Invalid', message: 'data.value: Invalid value: "c2VjcmV0"' },
      422,
    );
    expect(describeFailure(error)).toBe('PATCH /api/v1/namespaces/ns/secrets/s: 422 Invalid');
  });

  it('names the refused fields and rules of an invalid object, without their values', () => {
    const error = new KubeApiError(
      'POST',
      '/api/v1/namespaces/ns/serviceaccounts',
      {
        reason: 'Invalid',
        message: 'ServiceAccount "x" is invalid: metadata.labels: Invalid value: "a-very-long-value"',
        details: {
          causes: [
            { field: 'metadata.labels', reason: 'FieldValueInvalid', message: 'Invalid value: "a-very-long-value"' },
            { field: 'metadata.labels', reason: 'FieldValueInvalid', message: 'Invalid value: "again"' },
            { reason: 'FieldValueRequired', message: 'no field' },
          ],
        },
      },
      422,
    );
    expect(describeFailure(error)).toBe(
      'POST /api/v1/namespaces/ns/serviceaccounts: 422 Invalid (metadata.labels FieldValueInvalid)',
    );
  });

  it('says how a transport error ended', () => {
    const timeout = new DOMException('timed out', 'TimeoutError');
    expect(describeFailure(new KubeTransportError('GET', '/api', timeout))).toBe('GET /api: timed out');
    const deadline = new ReconcileTimeoutError('machine', 'ns/m', 100);
    expect(describeFailure(new KubeTransportError('GET', '/api', deadline))).toBe(
      'GET /api: aborted at the reconcile deadline',
    );
    expect(describeFailure(new KubeTransportError('GET', '/api', new Error('ECONNREFUSED')))).toBe(
      'GET /api: unreachable',
    );
  });

  it('masks keys, tokens and long base64 in other errors, and caps the length', () => {
    const jwt = 'eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJzeXN0ZW0ifQ.c2lnbmF0dXJl';
    const pem = '-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBg\n-----END PRIVATE KEY-----';
    const message = describeFailure(new Error(`token ${jwt} key ${pem} token abcdef.0123456789abcdef`));
    expect(message).not.toContain(jwt);
    expect(message).not.toContain('MIIEvQIBADANBg');
    expect(message).not.toContain('abcdef.0123456789abcdef');
    expect(message).toContain('[redacted]');
    expect(describeFailure(new Error('x'.repeat(1000))).length).toBeLessThanOrEqual(256);
  });
});
