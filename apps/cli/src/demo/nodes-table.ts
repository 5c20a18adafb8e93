import { type V1Node } from '@kubernetes/client-node';
import { since } from '../describe/tree.js';

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
      const created = node.metadata?.creationTimestamp;
      return [
        node.metadata?.name ?? '',
        `${status}${node.spec?.unschedulable ? ',SchedulingDisabled' : ''}`,
        roles.length > 0 ? roles.join(',') : '<none>',
        since(created ? new Date(created).toISOString() : undefined, now),
        node.status?.nodeInfo?.kubeletVersion ?? '',
      ];
    });
  const header = ['NAME', 'STATUS', 'ROLES', 'AGE', 'VERSION'];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  return [header, ...rows].map((r) => r.map((v, i) => (i === r.length - 1 ? v : v.padEnd(widths[i]! + 2))).join('').trimEnd()).join('\n');
}
