import { gzipJson, PLAN_KEYS, planChecksum, type MachinePlan, type PlanData } from '@capstan/node-agent';
import { MAX_FAILURE_OUTPUT_CHARS, summarizePlan } from './plan-summary.js';

// What a Machine's page shows of its plan Secret: state, probes and why it failed, never the plan. The plan below
// holds a file whose content is a secret and an instruction whose environment and arguments carry one, and its failed
// run echoed all of them: none of it may reach the answer.

const FILE_SECRET = 'token: K10c0ffee0123456789abcdef0123456789abcdef::server:s3cr3t-join-password';
const ENV_SECRET = 'hunter2-database-password-7f3a';
const ARG_SECRET = 'api-key-51b2c9d0e8';

const plan: MachinePlan = {
  files: [
    {
      path: '/etc/rancher/k3s/config.yaml.d/50-capstan.yaml',
      content: Buffer.from(`write-kubeconfig-mode: "0600"\n${FILE_SECRET}\n`).toString('base64'),
      permissions: '0600',
    },
  ],
  instructions: [
    {
      name: 'install',
      command: 'sh',
      args: ['/opt/capstan/k3s-install.sh', '--registry-auth', ARG_SECRET],
      env: [`DB_PASSWORD=${ENV_SECRET}`, 'INSTALL_K3S_VERSION=v1.35.4+k3s1'],
    },
  ],
  probes: { 'kube-apiserver': { httpGet: { url: 'https://127.0.0.1:6443/readyz' } } },
};
const raw = Buffer.from(JSON.stringify(plan));

function secretData(extra: PlanData): PlanData {
  return { [PLAN_KEYS.plan]: raw, ...extra };
}

const everySecretForm = [
  FILE_SECRET,
  plan.files![0]!.content!,
  ENV_SECRET,
  `DB_PASSWORD=${ENV_SECRET}`,
  ARG_SECRET,
  's3cr3t-join-password',
  'K10c0ffee0123456789abcdef',
];

describe('summarizePlan', () => {
  it('says what the agent reported of a failed plan, with its output scrubbed of the plan and of secret shapes', () => {
    const output = [
      '+ sh /opt/capstan/k3s-install.sh',
      `config: ${FILE_SECRET}`,
      `environment: DB_PASSWORD=${ENV_SECRET}`,
      `registry auth ${ARG_SECRET} refused`,
      'Authorization: Bearer eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJzeXN0ZW0ifQ.c2lnbmF0dXJl',
      'client-key: -----BEGIN EC PRIVATE KEY-----\nMHcCAQEEIBkg\n-----END EC PRIVATE KEY-----',
      'password=plain-text-pass',
      'k3s: exit status 1: could not reach the server',
    ].join('\n');
    const summary = summarizePlan(
      secretData({
        [PLAN_KEYS.state]: Buffer.from('failed'),
        [PLAN_KEYS.revision]: Buffer.from('3'),
        [PLAN_KEYS.failureCount]: Buffer.from('2'),
        [PLAN_KEYS.failedChecksum]: Buffer.from(planChecksum(raw)),
        [PLAN_KEYS.failureMessage]: Buffer.from(`instruction install exited 1 (DB_PASSWORD=${ENV_SECRET})`),
        [PLAN_KEYS.failedOutput]: gzipJson({ install: output }),
        [PLAN_KEYS.probeStatuses]: Buffer.from(
          JSON.stringify({ 'kube-apiserver': { healthy: false, successCount: 0, failureCount: 4 } }),
        ),
      }),
    );

    expect(summary).toMatchObject({
      state: 'failed',
      applied: false,
      revision: 3,
      failures: 2,
      probes: [{ name: 'kube-apiserver', healthy: false, successCount: 0, failureCount: 4 }],
    });
    expect(summary.failureMessage).toContain('instruction install exited 1');
    expect(summary.failureOutput).toContain('--- install');
    expect(summary.failureOutput).toContain('k3s: exit status 1: could not reach the server');
    expect(summary.failureOutput).toContain('[redacted]');
    const answer = JSON.stringify(summary);
    for (const secret of everySecretForm) expect(answer).not.toContain(secret);
    for (const leak of [
      'eyJhbGciOiJSUzI1NiJ9',
      'MHcCAQEEIBkg',
      'plain-text-pass',
      'k3s-install.sh',
      '50-capstan.yaml',
    ])
      expect(answer).not.toContain(leak);
  });

  it('shows an applied plan by its short checksum and probes, and no output of a run that succeeded', () => {
    const checksum = planChecksum(raw);
    const summary = summarizePlan(
      secretData({
        [PLAN_KEYS.state]: Buffer.from('succeeded'),
        [PLAN_KEYS.appliedChecksum]: Buffer.from(checksum),
        [PLAN_KEYS.appliedOutput]: gzipJson({ install: `installed with ${ENV_SECRET}` }),
        [PLAN_KEYS.lastApplyTime]: Buffer.from('2026-11-29T10:00:00Z'),
        [PLAN_KEYS.probeStatuses]: Buffer.from(
          JSON.stringify({
            'kube-apiserver': { healthy: true, successCount: 3, failureCount: 0 },
            bogus: 'x',
          }),
        ),
      }),
    );
    expect(summary).toEqual({
      state: 'succeeded',
      applied: true,
      appliedChecksum: checksum.slice(0, 12),
      lastApplyTime: '2026-11-29T10:00:00Z',
      probes: [{ name: 'kube-apiserver', healthy: true, successCount: 3, failureCount: 0 }],
    });
    for (const secret of everySecretForm) expect(JSON.stringify(summary)).not.toContain(secret);
  });

  it('keeps only the tail of a long failed output', () => {
    const summary = summarizePlan(
      secretData({
        [PLAN_KEYS.state]: Buffer.from('failed'),
        [PLAN_KEYS.failedOutput]: gzipJson({ install: `${'x'.repeat(100_000)}\nthe last line` }),
      }),
    );
    expect(summary.failureOutput).toHaveLength(MAX_FAILURE_OUTPUT_CHARS);
    expect(summary.failureOutput!.endsWith('the last line')).toBe(true);
  });

  it('says when a Secret holds no plan yet', () => {
    expect(summarizePlan({})).toEqual({ state: 'no plan', applied: false, probes: [] });
    expect(summarizePlan(secretData({})).state).toBe('pending');
  });
});
