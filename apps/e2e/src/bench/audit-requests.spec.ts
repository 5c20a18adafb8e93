import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { auditRequestsByClient, clientOf, requestOf } from './audit-requests.js';

function event(fields: { stage?: string; verb: string; userAgent: string; at: string; resource?: string; subresource?: string }): string {
  return JSON.stringify({
    kind: 'Event',
    apiVersion: 'audit.k8s.io/v1',
    level: 'Metadata',
    stage: fields.stage ?? 'ResponseComplete',
    verb: fields.verb,
    userAgent: fields.userAgent,
    requestReceivedTimestamp: fields.at,
    ...(fields.resource && { objectRef: { resource: fields.resource, subresource: fields.subresource } }),
  });
}

describe('requests by client from the audit log', () => {
  it('names a client by its user agent up to the first slash', () => {
    expect(clientOf('manager/v1.14.2 (linux/amd64) kubernetes/abc')).toBe('manager');
    expect(clientOf('capstan-core/capstan (linux/x64) node/24.11.1')).toBe('capstan-core');
    expect(clientOf('kube-controller-manager/v1.34.4 (linux/amd64) kubernetes/x/system:serviceaccount:kube-system:gc')).toBe('kube-controller-manager');
    expect(clientOf(undefined)).toBe('unknown');
    expect(clientOf('')).toBe('unknown');
  });

  it('names a request by verb, resource and subresource', () => {
    expect(requestOf({ verb: 'patch', objectRef: { resource: 'machines', subresource: 'status' } })).toBe('PATCH machines/status');
    expect(requestOf({ verb: 'get', objectRef: { resource: 'secrets' } })).toBe('GET secrets');
    expect(requestOf({ verb: 'get' })).toBe('GET non-resource');
  });

  it('counts finished requests per client in each window, skipping other stages and cut lines', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'audit-requests-'));
    try {
      const path = join(dir, 'audit.log');
      writeFileSync(
        path,
        [
          event({ verb: 'get', userAgent: 'capstan-core/capstan', at: '2026-11-25T10:00:00.000000Z', resource: 'secrets' }),
          event({ verb: 'get', userAgent: 'capstan-core/capstan', at: '2026-11-25T10:00:01.000000Z', resource: 'secrets' }),
          event({ stage: 'ResponseStarted', verb: 'watch', userAgent: 'capstan-core/capstan', at: '2026-11-25T10:00:01.000000Z', resource: 'machines' }),
          event({ verb: 'patch', userAgent: 'capstan-machine-provider/capstan', at: '2026-11-25T10:00:02.000000Z', resource: 'simmachines', subresource: 'status' }),
          event({ verb: 'create', userAgent: 'manager/v1.14.2', at: '2026-11-25T10:00:05.000000Z', resource: 'machines' }),
          '{"kind":"Event","stage":"Respo',
          '',
        ].join('\n'),
      );
      const [early, all] = await auditRequestsByClient(path, [
        { fromMs: Date.parse('2026-11-25T10:00:00Z'), toMs: Date.parse('2026-11-25T10:00:01.5Z') },
        { fromMs: 0, toMs: Date.parse('2026-11-26T00:00:00Z') },
      ]);
      expect(early).toEqual({ 'capstan-core': { total: 2, byRequest: { 'GET secrets': 2 } } });
      expect(all).toEqual({
        'capstan-core': { total: 2, byRequest: { 'GET secrets': 2 } },
        'capstan-machine-provider': { total: 1, byRequest: { 'PATCH simmachines/status': 1 } },
        manager: { total: 1, byRequest: { 'CREATE machines': 1 } },
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
