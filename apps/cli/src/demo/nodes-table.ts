import { type V1Node } from '@kubernetes/client-node';
import { creationAge, renderTable } from '../tables/table.js';

/** The table `kubectl get nodes` prints: NAME STATUS ROLES AGE VERSION. */
export function nodesTable(nodes: V1Node[], now = new Date()): string {
  const rows = [...nodes]
    .sort((a, b) => (a.metadata?.name ?? '').localeCompare(b.metadata?.name ?? ''))
    .map((node) => {
      const ready = node.status?.conditions?.find((c) => c.type === 'Ready');
      const status = ready?.status === 'True' ? 'Ready' : 'NotReady';
      const roles = Object.keys(node.metadata?.labels ?? {})
        .filter((l) => l.startsWith('node-role.kubernetes.io/'))
        .map((l) => l.slice('node-role.kubernetes.io/'.length))
        .sort();
      return [
        node.metadata?.name ?? '',
        `${status}${node.spec?.unschedulable ? ',SchedulingDisabled' : ''}`,
        roles.length > 0 ? roles.join(',') : '<none>',
        creationAge(node.metadata?.creationTimestamp, now),
        node.status?.nodeInfo?.kubeletVersion ?? '',
      ];
    });
  return renderTable(['NAME', 'STATUS', 'ROLES', 'AGE', 'VERSION'], rows);
}
