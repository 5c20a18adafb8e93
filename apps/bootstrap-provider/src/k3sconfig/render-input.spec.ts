import type { Cluster, Machine } from '@capstan/api';
import { generateClusterCertificates, type ClusterCertificates } from '@capstan/pki';
import { parseK3sCloudConfig, renderK3sCloudConfig } from '@capstan/k3s-bootstrap';
import { bootstrapInputFor, k3sReleaseFor, serverConfigWithClusterDefaults } from './render-input.js';

const cluster = (network?: NonNullable<Cluster['spec']>['clusterNetwork']): Cluster => ({
  apiVersion: 'cluster.x-k8s.io/v1beta2',
  kind: 'Cluster',
  metadata: { name: 'demo', namespace: 'ns' },
  spec: {
    controlPlaneEndpoint: { host: '10.0.0.10', port: 6443 },
    ...(network && { clusterNetwork: network }),
  },
});

const machine = (providerID?: string): Machine => ({
  apiVersion: 'cluster.x-k8s.io/v1beta2',
  kind: 'Machine',
  metadata: { name: 'demo-cp-abcde', namespace: 'ns' },
  spec: {
    clusterName: 'demo',
    version: 'v1.31.4',
    bootstrap: { configRef: { apiGroup: 'bootstrap.capstan.dev', kind: 'K3sConfig', name: 'demo-cp-abcde' } },
    infrastructureRef: { apiGroup: 'infrastructure.capstan.dev', kind: 'SimMachine', name: 'demo-cp-abcde' },
    ...(providerID && { providerID }),
  },
});

describe('k3sReleaseFor', () => {
  it('prefers the K3sConfig version and adds the first K3s build to a plain Kubernetes version', () => {
    expect(k3sReleaseFor('v1.32.1+k3s2', 'v1.31.4')).toBe('v1.32.1+k3s2');
    expect(k3sReleaseFor(undefined, 'v1.31.4')).toBe('v1.31.4+k3s1');
    expect(k3sReleaseFor('', 'v1.31.4+k3s3')).toBe('v1.31.4+k3s3');
    expect(k3sReleaseFor(undefined, undefined)).toBeUndefined();
  });
});

describe('serverConfigWithClusterDefaults', () => {
  it('takes pod and service CIDRs and the service domain from the Cluster unless the config sets them', () => {
    const network = {
      pods: { cidrBlocks: ['10.42.0.0/16', 'fd00:42::/56'] },
      services: { cidrBlocks: ['10.43.0.0/16'] },
      serviceDomain: 'example.local',
    };
    expect(serverConfigWithClusterDefaults(undefined, cluster(network))).toEqual({
      clusterCIDR: '10.42.0.0/16,fd00:42::/56',
      serviceCIDR: '10.43.0.0/16',
      clusterDomain: 'example.local',
    });
    expect(
      serverConfigWithClusterDefaults(
        { serviceCIDR: '10.96.0.0/12', disableComponents: ['traefik'] },
        cluster(network),
      ),
    ).toEqual({
      clusterCIDR: '10.42.0.0/16,fd00:42::/56',
      serviceCIDR: '10.96.0.0/12',
      clusterDomain: 'example.local',
      disableComponents: ['traefik'],
    });
    expect(serverConfigWithClusterDefaults(undefined, cluster())).toEqual({});
  });
});

describe('bootstrapInputFor', () => {
  let certificates: ClusterCertificates;
  beforeAll(async () => {
    certificates = await generateClusterCertificates('demo');
  });

  it('renders a joining server with the cluster endpoint, the cluster network and the certificates', () => {
    const parsed = parseK3sCloudConfig(
      renderK3sCloudConfig(
        bootstrapInputFor({
          role: 'join-server',
          spec: { agentConfig: { nodeLabels: ['tier=cp'] } },
          files: [{ path: '/etc/motd', content: 'hello' }],
          version: 'v1.31.4+k3s1',
          machine: machine(),
          cluster: cluster({ pods: { cidrBlocks: ['10.42.0.0/16'] } }),
          token: 'secret-token',
          certificates,
        }),
      ),
    );
    expect(parsed).toMatchObject({
      role: 'join-server',
      version: 'v1.31.4+k3s1',
      serverUrl: 'https://10.0.0.10:6443',
      token: 'secret-token',
      clusterCIDR: '10.42.0.0/16',
      nodeLabels: { tier: 'cp' },
    });
    expect(parsed.providerID).toBeUndefined();
    expect(parsed.serverTls.serverCA?.certPem).toBe(certificates.ca.certPem);
    expect(parsed.userFiles.map((f) => [f.path, f.content.toString()])).toEqual([['/etc/motd', 'hello']]);
  });

  it('passes a known providerID as a kubelet arg, and gives agents neither certificates nor server settings', () => {
    const input = bootstrapInputFor({
      role: 'agent',
      spec: { serverConfig: { disableComponents: ['traefik'] } },
      files: [],
      version: 'v1.31.4+k3s1',
      machine: machine('sim://ns/demo-md-0-xyz'),
      cluster: cluster({ services: { cidrBlocks: ['10.43.0.0/16'] } }),
      token: 'secret-token',
      certificates,
    });
    expect(input.certificates).toBeUndefined();
    expect(input.spec.serverConfig).toBeUndefined();
    const parsed = parseK3sCloudConfig(renderK3sCloudConfig(input));
    expect(parsed).toMatchObject({ role: 'agent', providerID: 'sim://ns/demo-md-0-xyz', serverTls: {} });
  });
});
