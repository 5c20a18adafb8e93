import type { MachineDeployment, MachineSet } from '@capstan/api';
import { findCurrentMachineSet, machineSetPatch, newMachineSet } from './machinedeployment.sets.js';
import { templateHash } from './template-hash.js';

const deployment = (
  over: Partial<MachineDeployment['spec']> = {},
  annotations: Record<string, string> = {},
): MachineDeployment => ({
  apiVersion: 'cluster.x-k8s.io/v1beta2',
  kind: 'MachineDeployment',
  metadata: { name: 'md', namespace: 'ns', uid: 'md-uid', annotations },
  spec: {
    clusterName: 'demo',
    replicas: 3,
    selector: { matchLabels: { pool: 'a' } },
    template: {
      metadata: { labels: { pool: 'a' } },
      spec: {
        clusterName: 'demo',
        version: 'v1.31.0',
        bootstrap: { dataSecretName: 'data' },
        infrastructureRef: { apiGroup: 'i', kind: 'SimMachineTemplate', name: 't' },
      },
    },
    ...over,
  },
});
const limits = { replicas: 3, maxSurge: 1, maxUnavailable: 0 };
const created = (ms: MachineSet, at: string, revision: string): MachineSet => ({
  ...ms,
  metadata: {
    ...ms.metadata,
    creationTimestamp: at as unknown as Date,
    annotations: { ...ms.metadata.annotations, 'machinedeployment.clusters.x-k8s.io/revision': revision },
  },
});

describe('MachineSets of a MachineDeployment', () => {
  it('creates a set labelled and selected by the template hash, owned by the deployment', () => {
    const md = deployment({}, { team: 'x', 'machinedeployment.clusters.x-k8s.io/revision': '7' });
    const hash = templateHash(md.spec.template);
    const ms = newMachineSet(md, hash, 2, 1, limits);
    expect(ms.metadata.name).toBe(`md-${hash}`);
    expect(ms.metadata.labels).toEqual({
      pool: 'a',
      'machine-template-hash': hash,
      'cluster.x-k8s.io/deployment-name': 'md',
      'cluster.x-k8s.io/cluster-name': 'demo',
    });
    expect(ms.metadata.annotations).toEqual({
      team: 'x',
      'machinedeployment.clusters.x-k8s.io/revision': '2',
      'machinedeployment.clusters.x-k8s.io/desired-replicas': '3',
      'machinedeployment.clusters.x-k8s.io/max-replicas': '4',
    });
    expect(ms.metadata.ownerReferences).toEqual([
      {
        apiVersion: 'cluster.x-k8s.io/v1beta2',
        kind: 'MachineDeployment',
        name: 'md',
        uid: 'md-uid',
        controller: true,
        blockOwnerDeletion: true,
      },
    ]);
    expect(ms.spec.selector.matchLabels).toEqual({ pool: 'a', 'machine-template-hash': hash });
    expect(ms.spec.template.metadata?.labels).toEqual({ pool: 'a', 'machine-template-hash': hash });
    expect(ms.spec.replicas).toBe(1);
  });

  it('finds the set running the template, the latest revision first, created after a due rollout.after', () => {
    const md = deployment();
    const hash = templateHash(md.spec.template);
    const older = created(newMachineSet(md, hash, 1, 3, limits), '2026-01-01T00:00:00Z', '1');
    const newer = created(
      { ...older, metadata: { ...older.metadata, name: 'md-x' } },
      '2026-02-01T00:00:00Z',
      '3',
    );
    const other = created(
      newMachineSet(
        deployment({
          template: { ...md.spec.template, spec: { ...md.spec.template.spec, version: 'v1.32.0' } },
        }),
        'h',
        2,
        0,
        limits,
      ),
      '2026-03-01T00:00:00Z',
      '2',
    );
    const now = new Date('2026-06-01T00:00:00Z');
    expect(findCurrentMachineSet(md, [older, other, newer], now)).toBe(newer);
    expect(
      findCurrentMachineSet(
        { ...md, spec: { ...md.spec, rollout: { after: '2026-05-01T00:00:00Z' } } },
        [older, newer],
        now,
      ),
    ).toBeUndefined();
    // A rollout.after still ahead asks for nothing yet.
    expect(
      findCurrentMachineSet(
        { ...md, spec: { ...md.spec, rollout: { after: '2026-07-01T00:00:00Z' } } },
        [older],
        now,
      ),
    ).toBe(older);
    // Creation times have whole seconds: a set created in the second of a rollout.after with a fraction is after it.
    const sameSecond = created(newer, '2026-05-01T00:00:00Z', '4');
    expect(
      findCurrentMachineSet(
        { ...md, spec: { ...md.spec, rollout: { after: '2026-05-01T00:00:00.412Z' } } },
        [older, sameSecond],
        now,
      ),
    ).toBe(sameSecond);
  });

  it('patches only what differs, guarded by the resourceVersion, and nothing when all matches', () => {
    const md = deployment();
    const hash = templateHash(md.spec.template);
    const ms = {
      ...newMachineSet(md, hash, 1, 3, limits),
      metadata: { ...newMachineSet(md, hash, 1, 3, limits).metadata, resourceVersion: '42' },
    };
    expect(machineSetPatch(md, ms, {})).toBeUndefined();
    const changed = deployment({
      deletion: { order: 'Oldest' },
      template: {
        metadata: { labels: { pool: 'a', team: 'y' } },
        spec: { ...md.spec.template.spec, deletion: { nodeDrainTimeoutSeconds: 60 } },
      },
    });
    expect(machineSetPatch(changed, ms, { replicas: 2, limits: { ...limits, replicas: 2 } })).toEqual({
      metadata: {
        resourceVersion: '42',
        annotations: {
          'machinedeployment.clusters.x-k8s.io/desired-replicas': '2',
          'machinedeployment.clusters.x-k8s.io/max-replicas': '3',
        },
        labels: { team: 'y' },
      },
      spec: {
        replicas: 2,
        deletion: { order: 'Oldest' },
        template: {
          metadata: { labels: { pool: 'a', team: 'y', 'machine-template-hash': hash } },
          spec: { deletion: { nodeDrainTimeoutSeconds: 60 } },
        },
      },
    });
  });

  it('takes an empty annotation map on the set for none: nothing to patch (else every reconcile waited for a no-op)', () => {
    const md = deployment();
    const hash = templateHash(md.spec.template);
    const created = newMachineSet(md, hash, 1, 3, limits);
    const stored = {
      ...created,
      metadata: { ...created.metadata, resourceVersion: '7' },
      spec: {
        ...created.spec,
        template: {
          ...created.spec.template,
          metadata: { ...created.spec.template.metadata, annotations: {} },
        },
      },
    };
    expect(machineSetPatch(md, stored, {})).toBeUndefined();
  });
});
