import type { Condition, Machine } from '@capstan/api';

// Machines for unit tests of the pure workload logic: only the fields that logic reads.

export interface MachineShape {
  name: string;
  createdSecondsAgo?: number;
  deleting?: boolean;
  annotations?: Record<string, string>;
  labels?: Record<string, string>;
  nodeRef?: string;
  /** Condition type -> status (lastTransitionTime: `transitionSecondsAgo`). */
  conditions?: Record<string, 'True' | 'False' | 'Unknown'>;
  transitionSecondsAgo?: number;
  owner?: string;
}

export const NOW = Date.parse('2026-06-01T12:00:00Z');

export function iso(secondsAgo: number, now = NOW): string {
  return new Date(now - secondsAgo * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

export function machine(shape: MachineShape): Machine {
  const conditions: Condition[] = Object.entries(shape.conditions ?? {}).map(([type, status]) => ({
    type,
    status,
    reason: status === 'True' ? type : `Not${type}`,
    message: '',
    lastTransitionTime: iso(shape.transitionSecondsAgo ?? 60),
  }));
  return {
    apiVersion: 'cluster.x-k8s.io/v1beta2',
    kind: 'Machine',
    metadata: {
      name: shape.name,
      namespace: 'ns',
      uid: `uid-${shape.name}`,
      creationTimestamp: iso(shape.createdSecondsAgo ?? 3600) as unknown as Date,
      ...(shape.deleting ? { deletionTimestamp: iso(1) as unknown as Date } : {}),
      ...(shape.annotations ? { annotations: shape.annotations } : {}),
      ...(shape.labels ? { labels: shape.labels } : {}),
      ...(shape.owner
        ? {
            ownerReferences: [
              {
                apiVersion: 'cluster.x-k8s.io/v1beta2',
                kind: 'MachineSet',
                name: shape.owner,
                uid: `uid-${shape.owner}`,
                controller: true,
              },
            ],
          }
        : {}),
    },
    spec: {
      clusterName: 'demo',
      bootstrap: { dataSecretName: 'data' },
      infrastructureRef: {
        apiGroup: 'infrastructure.generic.capstan.dev',
        kind: 'GenericInfrastructureMachine',
        name: shape.name,
      },
    },
    status: {
      ...(shape.nodeRef ? { nodeRef: { name: shape.nodeRef } } : {}),
      conditions,
    },
  };
}

/** A Machine with a Node, Ready and Available: what a healthy running Machine looks like. */
export function running(name: string, extra: Partial<MachineShape> = {}): Machine {
  return machine({
    name,
    nodeRef: `node-${name}`,
    ...extra,
    conditions: { Ready: 'True', Available: 'True', NodeHealthy: 'True', ...extra.conditions },
  });
}
