import type { MachineTemplateSpec } from '@capstan/api';
import { resolveRolloutLimits } from './rollout-limits.js';
import { sameMachines, templateHash } from './template-hash.js';

const template = (
  version: string,
  extra: Partial<MachineTemplateSpec['spec']> = {},
  labels = {},
): MachineTemplateSpec => ({
  metadata: { labels },
  spec: {
    clusterName: 'demo',
    version,
    bootstrap: { configRef: { apiGroup: 'b', kind: 'K3sConfigTemplate', name: 't' } },
    infrastructureRef: { apiGroup: 'i', kind: 'SimMachineTemplate', name: 't' },
    ...extra,
  },
});

describe('machine template hash', () => {
  it('is stable and changes with what needs new Machines', () => {
    expect(templateHash(template('v1.31.0'))).toMatch(/^[0-9a-f]{10}$/);
    expect(templateHash(template('v1.31.0'))).toBe(templateHash(template('v1.31.0')));
    expect(templateHash(template('v1.31.1'))).not.toBe(templateHash(template('v1.31.0')));
  });

  it('ignores labels, annotations and in-place fields', () => {
    const base = template('v1.31.0');
    const inPlace = template(
      'v1.31.0',
      { deletion: { nodeDrainTimeoutSeconds: 30 }, minReadySeconds: 5 },
      { team: 'x' },
    );
    expect(templateHash(inPlace)).toBe(templateHash(base));
    expect(sameMachines(inPlace, base)).toBe(true);
    expect(sameMachines(template('v1.31.1'), base)).toBe(false);
  });

  it('includes a due rollout.after', () => {
    expect(templateHash(template('v1'), '2026-01-01T00:00:00Z')).not.toBe(templateHash(template('v1')));
  });
});

describe('rollout limits', () => {
  const md = (
    replicas: number,
    rollingUpdate?: { maxSurge?: number | string; maxUnavailable?: number | string },
    type?: 'OnDelete',
  ) =>
    ({
      spec: {
        replicas,
        rollout: { strategy: { ...(type ? { type } : {}), ...(rollingUpdate ? { rollingUpdate } : {}) } },
      },
    }) as never;

  it('rounds maxSurge up and maxUnavailable down', () => {
    expect(resolveRolloutLimits(md(10, { maxSurge: '25%', maxUnavailable: '25%' }))).toEqual({
      replicas: 10,
      maxSurge: 3,
      maxUnavailable: 2,
    });
  });

  it('defaults to surge 1, unavailable 0, and allows one unavailable when both resolve to 0', () => {
    expect(resolveRolloutLimits(md(3))).toEqual({ replicas: 3, maxSurge: 1, maxUnavailable: 0 });
    expect(resolveRolloutLimits(md(3, { maxSurge: '10%', maxUnavailable: '10%' }))).toEqual({
      replicas: 3,
      maxSurge: 1,
      maxUnavailable: 0,
    });
    expect(resolveRolloutLimits(md(3, { maxSurge: 0, maxUnavailable: '10%' }))).toEqual({
      replicas: 3,
      maxSurge: 0,
      maxUnavailable: 1,
    });
  });

  it('never surges with OnDelete', () => {
    expect(resolveRolloutLimits(md(3, undefined, 'OnDelete'))).toEqual({
      replicas: 3,
      maxSurge: 0,
      maxUnavailable: 0,
    });
  });
});
