import { gzipSync } from 'node:zlib';
import { BootstrapDataError, BootstrapRenderError } from '@capstan/k3s-bootstrap';
import type { V1Secret } from '@kubernetes/client-node';
import { gzipJson, PLAN_KEYS, planChecksum, type MachinePlan } from '@capstan/node-agent';
import { initialPlanFor } from './machine-plan.js';
import {
  currentPlanOf,
  probesDeadlineIn,
  PROBES_DEADLINE_MS,
  updateOutcome,
  updatePlanFor,
} from './in-place-update.js';
import { withRegistriesFiles } from './registries-plan.js';

const render = {
  role: 'agent' as const,
  spec: { version: 'v1.35.4+k3s1', files: [{ path: '/etc/motd', content: 'hello' }] },
  endpoint: { host: '10.0.0.1', port: 6443 },
  token: 'K10secret-token::server:abcdef',
};

function secretWith(data: Record<string, Buffer | string>): V1Secret {
  return {
    metadata: { name: 'm-machine-plan', namespace: 'ns' },
    data: Object.fromEntries(
      Object.entries(data).map(([k, v]) => [k, (typeof v === 'string' ? Buffer.from(v) : v).toString('base64')]),
    ),
  };
}

describe('updatePlanFor', () => {
  it("keeps the machine plan's probes and periodic instructions (a server's certificate check)", () => {
    const base = initialPlanFor('init-server', { host: '10.0.0.1', port: 6443 });
    const plan = updatePlanFor({ render, restart: true, ...base, probes: base.probes });
    expect(plan.periodicInstructions?.map((p) => p.name)).toEqual(['certificate-expiry']);
    expect(Object.keys(plan.probes ?? {})).toEqual(['kube-apiserver']);
  });

  it('writes the K3s config and the files, and runs the install script with the new release only on restart', () => {
    const plan = updatePlanFor({ render, restart: true, probes: undefined });
    expect(plan.files?.map((f) => f.path)).toEqual(['/etc/rancher/k3s/config.yaml', '/etc/motd']);
    const config = Buffer.from(plan.files![0]!.content!, 'base64').toString('utf8');
    expect(config).toContain('token: K10secret-token::server:abcdef');
    expect(plan.files![0]!.permissions).toBe('0600');
    expect(plan.instructions).toEqual([
      expect.objectContaining({
        name: 'install',
        command: 'sh',
        args: ['-c', 'exec sh "${CAPSTAN_HOST_ROOT%/}/opt/k3s/install.sh"'],
        env: ['INSTALL_K3S_VERSION=v1.35.4+k3s1', 'INSTALL_K3S_EXEC=agent'],
        saveOutput: true,
      }),
    ]);
    expect(updatePlanFor({ render, restart: false, probes: undefined }).instructions).toBeUndefined();
  });

  it('needs no cluster certificates for a server: a running server keeps its TLS files', () => {
    const server = { ...render, role: 'join-server' as const };
    expect(updatePlanFor({ render: server, restart: true, probes: undefined }).files?.[0]?.path).toBe(
      '/etc/rancher/k3s/config.yaml',
    );
  });

  it('keeps the rendered data’s file rules: the install script it runs and the agent’s files are not a tenant’s', () => {
    for (const path of ['/opt/k3s/install.sh', '/etc/capstan/agent/config.yaml']) {
      const attempt = () =>
        updatePlanFor({ render: { ...render, spec: { ...render.spec, files: [{ path, content: 'x' }] } }, restart: true, probes: undefined });
      expect(attempt).toThrow(BootstrapRenderError);
      expect(attempt).toThrow(/spec\.files\[0\]\.path/);
    }
  });

  describe('private registries', () => {
    const CA = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n';
    const auth = { username: 'puller', password: 'pa55' };
    const registries = {
      mirrors: { 'docker.io': { endpoint: ['https://registry.example.com:5000'] } },
      configs: { 'registry.example.com:5000': { auth, tls: { caPem: CA } } },
    };
    const dir = '/var/lib/rancher/k3s/etc/tls/registries/registry.example.com:5000';
    const withRegistries = { ...render, spec: { ...render.spec, registries } };
    const decoded = (plan: MachinePlan, path: string) =>
      Buffer.from(plan.files!.find((f) => f.path === path)!.content!, 'base64').toString('utf8');

    it('writes registries.yaml (0600) and its CA (0644) after the K3s config, before the user files', () => {
      const plan = updatePlanFor({ render: withRegistries, restart: true, probes: undefined });
      expect(plan.files?.map((f) => [f.path, f.permissions])).toEqual([
        ['/etc/rancher/k3s/config.yaml', '0600'],
        ['/etc/rancher/k3s/registries.yaml', '0600'],
        [`${dir}/ca.crt`, '0644'],
        ['/etc/motd', undefined],
      ]);
      expect(decoded(plan, '/etc/rancher/k3s/registries.yaml')).toBe(
        [
          'mirrors:',
          '  docker.io:',
          '    endpoint:',
          '      - https://registry.example.com:5000',
          'configs:',
          '  registry.example.com:5000:',
          '    auth:',
          '      username: puller',
          '      password: pa55',
          '    tls:',
          `      ca_file: ${dir}/ca.crt`,
          '',
        ].join('\n'),
      );
      expect(decoded(plan, `${dir}/ca.crt`)).toBe(CA);
    });

    it('removes the registries files the machine’s plan wrote once the spec has none, and keeps doing so', () => {
      const written = updatePlanFor({ render: withRegistries, restart: true, probes: undefined });
      const removed = updatePlanFor({ render, restart: true, probes: undefined, current: written });
      expect(removed.files?.map((f) => [f.path, f.action])).toEqual([
        ['/etc/rancher/k3s/config.yaml', undefined],
        ['/etc/motd', undefined],
        ['/etc/rancher/k3s/registries.yaml', 'delete'],
        [`${dir}/ca.crt`, 'delete'],
      ]);
      // The same update computed again from its own plan (its status write was lost) is the same plan.
      expect(updatePlanFor({ render, restart: true, probes: undefined, current: removed })).toEqual(removed);
    });

    it('removes a dropped registry’s certificate files and rewrites what stays', () => {
      const written = updatePlanFor({ render: withRegistries, restart: true, probes: undefined });
      const authOnly = { ...registries, configs: { 'registry.example.com:5000': { auth } } };
      const withoutTls = { ...render, spec: { ...render.spec, registries: authOnly } };
      const plan = updatePlanFor({ render: withoutTls, restart: true, probes: undefined, current: written });
      expect(plan.files?.filter((f) => f.path !== '/etc/motd').map((f) => [f.path, f.action])).toEqual([
        ['/etc/rancher/k3s/config.yaml', undefined],
        ['/etc/rancher/k3s/registries.yaml', undefined],
        [`${dir}/ca.crt`, 'delete'],
      ]);
    });

    it('leaves a registries.yaml no plan wrote (the machine image’s own) alone', () => {
      const first = initialPlanFor('agent', { host: '10.0.0.1', port: 6443 });
      const plan = updatePlanFor({ render, restart: true, probes: undefined, current: first });
      expect(plan.files?.map((f) => f.path)).toEqual(['/etc/rancher/k3s/config.yaml', '/etc/motd']);
    });

    it('removes the files the first plan wrote with the bootstrap data', () => {
      const endpoint = { host: '10.0.0.1', port: 6443 };
      const first = withRegistriesFiles(initialPlanFor('init-server', endpoint), registries);
      expect(first.files?.map((f) => f.path)).toEqual(['/etc/rancher/k3s/registries.yaml', `${dir}/ca.crt`]);
      const plan = updatePlanFor({ render, restart: true, probes: undefined, current: first });
      expect(plan.files?.filter((f) => f.action === 'delete').map((f) => f.path)).toEqual([
        '/etc/rancher/k3s/registries.yaml',
        `${dir}/ca.crt`,
      ]);
    });

    it('reads the current plan from the plan Secret, and none from an empty or unreadable one', () => {
      const plan = updatePlanFor({ render: withRegistries, restart: false, probes: undefined });
      expect(currentPlanOf(secretWith({ plan: JSON.stringify(plan) }))).toEqual(plan);
      expect(currentPlanOf(secretWith({}))).toBeUndefined();
      expect(currentPlanOf(secretWith({ plan: '{"files": "not a list"}' }))).toBeUndefined();
    });
  });

  it('refuses files that decode to more than the limit, without holding them', () => {
    // 64 MiB of zeros gzip to about 64 KiB.
    const bomb = gzipSync(Buffer.alloc(64 * 1024 * 1024)).toString('base64');
    const attempt = () =>
      updatePlanFor({
        render: { ...render, spec: { ...render.spec, files: [{ path: '/srv/big', content: bomb, encoding: 'gzip+base64' as const }] } },
        restart: false,
        probes: undefined,
      });
    expect(attempt).toThrow(BootstrapDataError);
    expect(attempt).toThrow(/spec\.files\[0\]\.content decodes to more than/);
  });
});

describe('updateOutcome', () => {
  const plan: MachinePlan = { files: [] };
  const checksum = planChecksum(JSON.stringify(plan));
  const update = { target: 'abc', planChecksum: checksum, state: 'Updating' as const };

  // Issue 32, finding 9: an update waiting on an agent that never reported hung with no deadline.
  it('fails an update whose agent stopped reporting before it finished, and leaves a finished one alone', () => {
    const pending = { secretName: 's', checksum, state: 'pending' as const };
    expect(updateOutcome(update, pending, secretWith({}), [], new Date(), 40)).toMatchObject({
      state: 'Failed',
      message: 'the node agent stopped reporting (heartbeat Lease not renewed within 40s) before the update finished',
    });
    expect(updateOutcome(update, pending, secretWith({}), [], new Date()).state).toBe('Updating');
    const applied = { secretName: 's', checksum, appliedChecksum: checksum, state: 'succeeded' as const, probesHealthy: true };
    expect(updateOutcome(update, applied, secretWith({}), [], new Date(), 40).state).toBe('Succeeded');
  });

  it('succeeds once the update plan applied and its probes are healthy', () => {
    const secret = secretWith({});
    expect(
      updateOutcome(update, { secretName: 's', checksum, appliedChecksum: checksum, state: 'succeeded', probesHealthy: true }, secret, []),
    ).toEqual({ ...update, state: 'Succeeded' });
    expect(
      updateOutcome(update, { secretName: 's', checksum, appliedChecksum: checksum, state: 'succeeded', probesHealthy: false }, secret, []).state,
    ).toBe('Updating');
  });

  it('keeps a finished update finished when probes flap later', () => {
    const done = { ...update, state: 'Succeeded' as const };
    expect(
      updateOutcome(done, { secretName: 's', checksum, appliedChecksum: checksum, state: 'succeeded', probesHealthy: false }, secretWith({}), []),
    ).toBe(done);
  });

  // Issue 32, finding 9: the deadline compared the agent's clock (its last-apply-time) with the provider's. It runs
  // from when the provider first saw the plan applied, on its own clock, kept in the status.
  it('fails an update whose probes stay unhealthy past the deadline, naming them, timed on the provider clock', () => {
    const seenAt = new Date('2026-11-24T00:00:00Z');
    const secret = secretWith({
      // The machine's clock is a year behind: it must not matter.
      [PLAN_KEYS.lastApplyTime]: new Date('2025-11-24T00:00:00Z').toISOString(),
      [PLAN_KEYS.probeStatuses]: JSON.stringify({ 'kube-apiserver': { healthy: false, successCount: 0, failureCount: 9 } }),
    });
    const plan = { secretName: 's', checksum, appliedChecksum: checksum, state: 'succeeded' as const, probesHealthy: false };
    const first = updateOutcome(update, plan, secret, [], seenAt);
    expect(first).toMatchObject({ state: 'Updating', planAppliedAt: seenAt.toISOString() });
    const soon = new Date(seenAt.getTime() + 60_000);
    expect(updateOutcome(first, plan, secret, [], soon)).toMatchObject({ state: 'Updating', planAppliedAt: seenAt.toISOString() });
    expect(probesDeadlineIn(first, plan, secret, soon)).toBe(PROBES_DEADLINE_MS - 60_000 + 1000);
    const late = updateOutcome(first, plan, secret, [], new Date(seenAt.getTime() + PROBES_DEADLINE_MS + 1));
    expect(late).toMatchObject({ state: 'Failed', message: expect.stringContaining('probes never became healthy') });
    expect(late.message).toContain('kube-apiserver');
  });

  it('never shows part of a secret the tail would cut through', () => {
    const secret = secretWith({
      [PLAN_KEYS.failureMessage]: 'instruction install exited 1',
      // The token sits across the 512-character boundary of the tail.
      [PLAN_KEYS.failedOutput]: gzipJson({ install: `token ${render.token} ${'x'.repeat(500)}` }),
    });
    const outcome = updateOutcome(update, { secretName: 's', checksum, state: 'failed' }, secret, [render.token]);
    expect(outcome.message).not.toMatch(/secret-token|server:abcdef/);
  });

  it('ignores reports on another plan', () => {
    const other = 'f'.repeat(64);
    expect(updateOutcome(update, { secretName: 's', checksum: other, state: 'failed' }, secretWith({}), [])).toBe(update);
  });

  it('fails with the failing step and the tail of its output, the join token and key-like text masked', () => {
    const secret = secretWith({
      [PLAN_KEYS.failureMessage]: 'instruction install exited 1',
      [PLAN_KEYS.failedOutput]: gzipJson({
        install: `using token K10secret-token::server:abcdef\n${'A'.repeat(60)}\nk3s v1.99.0 is not available on this host`,
      }),
    });
    const outcome = updateOutcome(update, { secretName: 's', checksum, state: 'failed' }, secret, [render.token]);
    expect(outcome.state).toBe('Failed');
    expect(outcome.message).toContain('instruction install exited 1');
    expect(outcome.message).toContain('is not available on this host');
    expect(outcome.message).not.toContain('K10secret');
    expect(outcome.message).not.toContain('A'.repeat(60));
  });
});
