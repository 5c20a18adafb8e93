import { gzipJson, PLAN_KEYS, planChecksum, type PlanData } from '@capstan/node-agent';
import { planView, renderPlanView } from './plan-view.js';

const plan = JSON.stringify({
  files: [{ path: '/etc/rancher/k3s/config.yaml.d/50-capstan.yaml', content: Buffer.from('token: s3cr3t\n').toString('base64'), permissions: '0600' }],
  instructions: [{ name: 'install', command: 'sh', args: ['/opt/capstan/install.sh'], saveOutput: true }],
  probes: { 'kube-apiserver': { httpGet: { url: 'https://127.0.0.1:6443/readyz' } } },
});
const data = (extra: Record<string, Buffer | string>): PlanData =>
  Object.fromEntries(Object.entries({ [PLAN_KEYS.plan]: plan, ...extra }).map(([k, v]) => [k, Buffer.isBuffer(v) ? v : Buffer.from(v)]));

describe('capstan plan show', () => {
  it('shows state, files without content, probes and saved output', () => {
    const view = planView(
      'default/m1-machine-plan',
      data({
        [PLAN_KEYS.state]: 'succeeded',
        [PLAN_KEYS.revision]: '2',
        [PLAN_KEYS.appliedChecksum]: planChecksum(plan),
        [PLAN_KEYS.appliedOutput]: gzipJson({ install: 'installed v1.35.4+k3s1\n' }),
        [PLAN_KEYS.probeStatuses]: JSON.stringify({ 'kube-apiserver': { healthy: true, successCount: 3, failureCount: 0 } }),
      }),
      false,
    );
    const text = renderPlanView(view);
    expect(text).toContain('State:         succeeded');
    expect(text).toContain('(applied)');
    expect(text).toMatch(/50-capstan\.yaml {2}0600 {2}<14 bytes, sha256 [0-9a-f]{12}>/);
    expect(text).not.toContain('s3cr3t');
    expect(text).toContain('kube-apiserver  healthy (successes 3, failures 0)');
    expect(text).toContain('  installed v1.35.4+k3s1');
    expect(JSON.stringify(planView('x', data({}), true))).toContain(Buffer.from('token: s3cr3t\n').toString('base64'));
  });

  it('shows a failure with its step and the output of the failed run', () => {
    const text = renderPlanView(
      planView(
        'default/m1-machine-plan',
        data({
          [PLAN_KEYS.state]: 'failed',
          [PLAN_KEYS.failureMessage]: 'instruction install exited 1',
          [PLAN_KEYS.failureCount]: '2',
          [PLAN_KEYS.failedOutput]: gzipJson({ install: 'no such version\n' }),
        }),
        false,
      ),
    );
    expect(text).toContain('Failure:       instruction install exited 1 (2 time(s))');
    expect(text).toContain('Output of the failed run:');
    expect(text).toContain('  no such version');
  });
});
