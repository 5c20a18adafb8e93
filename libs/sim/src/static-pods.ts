import { createHash } from 'node:crypto';
import type { V1Pod } from '@kubernetes/client-node';
import type { K3sRole } from '@capstan/k3s-bootstrap';

/** The annotation a kubelet puts on the API copy (mirror) of a static pod; drains skip such pods. */
export const MIRROR_POD_ANNOTATION = 'kubernetes.io/config.mirror';

/** The control plane components a server node shows as static pods (K3s servers of Capstan run embedded etcd). */
function componentsOf(role: K3sRole): string[] {
  return role === 'agent' ? [] : ['etcd', 'kube-apiserver', 'kube-controller-manager', 'kube-scheduler'];
}

export interface StaticPodNode {
  name: string;
  uid: string;
  role: K3sRole;
  /** The node's release (`v1.34.4+k3s1`): the components' image tag. */
  version: string;
}

/**
 * The mirror pods of a server node's control plane components, as the kubelet creates them for static pod
 * manifests (kubeadm's layout, which upstream's in-memory provider shows too; a K3s server runs the same components
 * inside its own process): `<component>-<node>` in kube-system, bound to the node, owned by the Node, hostNetwork,
 * node-critical. They make the node look like a control plane node to tools, and give drains the mirror pods they
 * must leave alone.
 */
export function mirrorPodsFor(node: StaticPodNode): V1Pod[] {
  const tag = node.version.replace(/\+.*$/, '');
  return componentsOf(node.role).map((component) => {
    const image = component === 'etcd' ? 'registry.k8s.io/etcd:3.6.4-0' : `registry.k8s.io/${component}:${tag}`;
    const hash = createHash('sha256').update(`${node.name}/${component}/${image}`).digest('hex').slice(0, 32);
    return {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {
        name: `${component}-${node.name}`,
        namespace: 'kube-system',
        labels: { component, tier: 'control-plane' },
        annotations: {
          [MIRROR_POD_ANNOTATION]: hash,
          'kubernetes.io/config.hash': hash,
          'kubernetes.io/config.source': 'file',
        },
        ownerReferences: [{ apiVersion: 'v1', kind: 'Node', name: node.name, uid: node.uid, controller: true }],
      },
      spec: {
        nodeName: node.name,
        hostNetwork: true,
        priorityClassName: 'system-node-critical',
        tolerations: [{ operator: 'Exists', effect: 'NoExecute' }],
        containers: [{ name: component, image }],
      },
    };
  });
}

export function isMirrorPod(pod: V1Pod): boolean {
  return pod.metadata?.annotations?.[MIRROR_POD_ANNOTATION] !== undefined;
}
