import { NODE_NETWORK } from './node-network.js';

/** CoreDNS built here from the pinned module (tools/coredns): the node's cluster DNS image. */
export const COREDNS_IMAGE = 'capstan.dev/coredns:v1.14.7';

/**
 * The cluster DNS add-on, as kubeadm installs it (RBAC, Corefile, Deployment, the Service on the address kubelet hands
 * pods), trimmed to what this node needs: it answers for cluster.local only (no upstream: pods have no route out), on
 * an unprivileged port, as a non-root user with a read-only root.
 */
export function clusterDnsManifests(): Record<string, unknown>[] {
  const labels = { 'k8s-app': 'kube-dns' };
  const metadata = (name: string) => ({ name, namespace: 'kube-system', labels });
  return [
    { apiVersion: 'v1', kind: 'ServiceAccount', metadata: metadata('coredns') },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: { name: 'system:coredns', labels },
      rules: [
        { apiGroups: [''], resources: ['services', 'namespaces', 'pods'], verbs: ['list', 'watch'] },
        { apiGroups: ['discovery.k8s.io'], resources: ['endpointslices'], verbs: ['list', 'watch'] },
      ],
    },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name: 'system:coredns', labels },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'system:coredns' },
      subjects: [{ kind: 'ServiceAccount', name: 'coredns', namespace: 'kube-system' }],
    },
    {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: metadata('coredns'),
      data: {
        Corefile: [
          '.:1053 {',
          '    errors',
          '    health :8080',
          '    ready :8181',
          `    kubernetes ${NODE_NETWORK.clusterDomain} in-addr.arpa ip6.arpa {`,
          '        pods insecure',
          '        fallthrough in-addr.arpa ip6.arpa',
          '    }',
          '    cache 30',
          '    loadbalance',
          '}',
          '',
        ].join('\n'),
      },
    },
    {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: metadata('coredns'),
      spec: {
        replicas: 1,
        selector: { matchLabels: labels },
        template: {
          metadata: { labels },
          spec: {
            serviceAccountName: 'coredns',
            priorityClassName: 'system-cluster-critical',
            securityContext: { runAsNonRoot: true, runAsUser: 65532, runAsGroup: 65532 },
            containers: [
              {
                name: 'coredns',
                image: COREDNS_IMAGE,
                imagePullPolicy: 'Never',
                args: ['-conf', '/etc/coredns/Corefile'],
                ports: [
                  { name: 'dns', containerPort: 1053, protocol: 'UDP' },
                  { name: 'dns-tcp', containerPort: 1053, protocol: 'TCP' },
                ],
                readinessProbe: { httpGet: { path: '/ready', port: 8181 }, periodSeconds: 2 },
                livenessProbe: { httpGet: { path: '/health', port: 8080 }, periodSeconds: 10 },
                resources: { requests: { cpu: '20m', memory: '32Mi' }, limits: { memory: '128Mi' } },
                securityContext: {
                  allowPrivilegeEscalation: false,
                  readOnlyRootFilesystem: true,
                  capabilities: { drop: ['ALL'] },
                },
                volumeMounts: [{ name: 'config', mountPath: '/etc/coredns', readOnly: true }],
              },
            ],
            volumes: [{ name: 'config', configMap: { name: 'coredns' } }],
          },
        },
      },
    },
    {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { ...metadata('kube-dns'), annotations: {} },
      spec: {
        selector: labels,
        clusterIP: NODE_NETWORK.dnsServiceIp,
        ports: [
          { name: 'dns', port: 53, targetPort: 1053, protocol: 'UDP' },
          { name: 'dns-tcp', port: 53, targetPort: 1053, protocol: 'TCP' },
        ],
      },
    },
  ];
}
