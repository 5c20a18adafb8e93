import type { Cluster, Condition, MachineDeployment, MachineSet } from '@capstan/api';
import { machine, NOW, running } from '../../testing/machine-builder.js';
import { computeMachineDeploymentStatus } from './machinedeployment.status.js';

const deployment = (replicas: number): MachineDeployment =>
  ({
    apiVersion: 'cluster.x-k8s.io/v1beta2',
    kind: 'MachineDeployment',
    metadata: { name: 'md', namespace: 'ns', generation: 2 },
    spec: { clusterName: 'demo', replicas, selector: { matchLabels: { pool: 'a' } } },
  }) as unknown as MachineDeployment;
const byType = (status: ReturnType<typeof computeMachineDeploymentStatus>) =>
  Object.fromEntries((status.conditions ?? []).map((c) => [c.type, `${c.status}/${c.reason}/${c.message}`]));

describe('MachineDeployment status', () => {
  const now = new Date(NOW);
  const current = new Set(['new-1']);

  it('is Available while enough Machines are, and reports a rollout in progress', () => {
    const status = computeMachineDeploymentStatus({
      deployment: deployment(3),
      cluster: undefined,
      machineSets: [],
      machines: [running('old-1'), running('old-2'), running('new-1'), machine({ name: 'new-2' })],
      isUpToDate: (m) => current.has(m.metadata.name!),
      limits: { replicas: 3, maxSurge: 1, maxUnavailable: 0 },
      now,
    });
    expect(status).toMatchObject({
      replicas: 4,
      readyReplicas: 3,
      availableReplicas: 3,
      upToDateReplicas: 1,
      phase: 'Running',
    });
    expect(byType(status)).toMatchObject({
      Available: 'True/Available/',
      RollingOut: 'True/RollingOut/Rolling out 3 not up-to-date replicas',
      ScalingDown: 'True/ScalingDown/Scaling down from 4 to 3 replicas',
      MachinesUpToDate:
        'False/NotUpToDate/* Machines new-2, old-1, old-2: Machine does not run the current template',
    });
  });

  it('is not Available below replicas - maxUnavailable, and scaling up', () => {
    const status = computeMachineDeploymentStatus({
      deployment: deployment(4),
      cluster: undefined,
      machineSets: [],
      machines: [running('new-1'), machine({ name: 'new-2' })],
      isUpToDate: () => true,
      limits: { replicas: 4, maxSurge: 1, maxUnavailable: 1 },
      now,
    });
    expect(status.phase).toBe('ScalingUp');
    expect(byType(status)['Available']).toBe(
      'False/NotAvailable/1 available replicas, at least 3 required (spec.rollout.strategy.rollingUpdate.maxUnavailable is 1, spec.replicas is 4)',
    );
  });

  it('says what blocks scaling up: a missing Cluster, or what its current MachineSet says', () => {
    const observe = (cluster: boolean, setConditions: Condition[]) =>
      byType(
        computeMachineDeploymentStatus({
          deployment: deployment(2),
          cluster: cluster ? ({ metadata: { name: 'demo' } } as Cluster) : undefined,
          machineSets: [],
          currentMachineSet: {
            metadata: { name: 'md-abc' },
            status: { conditions: setConditions },
          } as unknown as MachineSet,
          machines: [running('new-1')],
          isUpToDate: () => true,
          limits: { replicas: 2, maxSurge: 1, maxUnavailable: 0 },
          now,
        }),
      )['ScalingUp'];
    const blocked: Condition = {
      type: 'ScalingUp',
      status: 'True',
      reason: 'ScalingUp',
      message:
        'Scaling up from 0 to 2 replicas is blocked because a template does not exist: no CustomResourceDefinition serves kind NoSuchTemplate',
      lastTransitionTime: new Date(NOW).toISOString(),
    };
    expect(observe(false, [])).toBe(
      'True/ScalingUp/Scaling up from 1 to 2 replicas is blocked because Cluster demo does not exist',
    );
    expect(observe(true, [blocked])).toBe(
      'True/ScalingUp/Scaling up from 1 to 2 replicas is blocked because MachineSet md-abc: a template does not exist: no CustomResourceDefinition serves kind NoSuchTemplate',
    );
    expect(observe(true, [{ ...blocked, message: 'Scaling up from 0 to 2 replicas' }])).toBe(
      'True/ScalingUp/Scaling up from 1 to 2 replicas',
    );
  });
});
