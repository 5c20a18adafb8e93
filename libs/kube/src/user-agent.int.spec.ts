import { readFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { startLocalEnvironment, type LocalEnvironment } from '@capstan/testing';
import type { V1Secret } from '@kubernetes/client-node';
import { createKubeClient } from './client.js';
import { SECRETS } from './core-kinds.js';
import { Manager } from './manager.js';
import { SharedInformers } from './shared-informers.js';
import { eventually, testLogger } from './testing/eventually.js';

interface AuditLine {
  verb: string;
  userAgent?: string;
  objectRef?: { resource?: string; namespace?: string; name?: string };
}

// Every request names its service in User-Agent (client-go's form), so kube-apiserver's audit log tells which
// service made it: the figures of bench:upstream's requests by client come from there. The audit log holds no
// bodies: a Secret's data never reaches it.
describe('the user agent of a service in the audit log', () => {
  let env: LocalEnvironment;

  beforeAll(async () => {
    env = await startLocalEnvironment({ auditLog: true });
  });
  afterAll(async () => {
    await env?.stop();
  });

  const auditLines = (): AuditLine[] =>
    readFileSync(env.auditLogPath!, 'utf8')
      .split('\n')
      .filter((line) => line.trim() !== '')
      .map((line) => JSON.parse(line) as AuditLine);

  it('names the field manager for direct requests and for the shared informers of a manager', async () => {
    const value = randomBytes(12).toString('hex');
    const client = createKubeClient({ kubeconfig: env.kubeconfig }, { fieldManager: 'capstan-ua-writer' });
    const shared = new SharedInformers();
    const manager = new Manager({
      kubeConfig: { kubeconfig: env.kubeconfig },
      fieldManager: 'capstan-ua-watcher',
      namespace: 'default',
      logger: testLogger(),
      sharedInformers: shared,
    });
    const informer = manager.informer<V1Secret>(SECRETS);
    try {
      await client.resource<V1Secret>(SECRETS).create({ metadata: { name: 'ua-secret', namespace: 'default' }, stringData: { key: value } });
      informer.start();
      await eventually('the informer holds the Secret', () => informer.getByName('default', 'ua-secret'));

      const lines = await eventually('the audit log holds the create and the list', () => {
        const all = auditLines();
        const created = all.find((l) => l.verb === 'create' && l.objectRef?.name === 'ua-secret');
        const listed = all.find((l) => l.verb === 'list' && l.objectRef?.resource === 'secrets' && l.objectRef.namespace === 'default');
        return created && listed ? { created, listed } : undefined;
      });
      expect(lines.created.userAgent).toMatch(/^capstan-ua-writer\/capstan \(\w+\/\w+\) node\/\d+/);
      expect(lines.listed.userAgent).toMatch(/^capstan-ua-watcher\//);
      expect(readFileSync(env.auditLogPath!, 'utf8')).not.toContain(value);
      expect(readFileSync(env.auditLogPath!, 'utf8')).not.toContain(Buffer.from(value).toString('base64'));
    } finally {
      await informer.stop();
      await shared.release(manager);
      await client.close();
    }
  });
});
