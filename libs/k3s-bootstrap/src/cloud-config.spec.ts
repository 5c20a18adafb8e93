import { generateClusterCertificates, type ClusterCertificates } from '@capstan/pki';
import { parse } from 'yaml';
import { renderK3sCloudConfig, type CloudConfigWriteFile } from './cloud-config.js';
import { BootstrapRenderError } from './errors.js';
import type { K3sBootstrapInput, K3sRole } from './k3s-config-spec.js';

const TOKEN = 'K10c0ffee::server:s3cr3t-join-token';

function documentOf(text: string): { write_files: CloudConfigWriteFile[]; runcmd: string[] } {
  expect(text.startsWith('#cloud-config\n')).toBe(true);
  return parse(text, { version: '1.1' }) as { write_files: CloudConfigWriteFile[]; runcmd: string[] };
}

function k3sConfigOf(text: string): Record<string, unknown> {
  const file = documentOf(text).write_files.find((f) => f.path === '/etc/rancher/k3s/config.yaml');
  return parse(file!.content, { version: '1.1' }) as Record<string, unknown>;
}

describe('renderK3sCloudConfig', () => {
  let certificates: ClusterCertificates;
  const input = (role: K3sRole, overrides: Partial<K3sBootstrapInput> = {}): K3sBootstrapInput => ({
    role,
    endpoint: { host: '192.0.2.10', port: 6443 },
    token: TOKEN,
    providerID: 'sim://default/demo-machine',
    certificates,
    spec: {
      version: 'v1.31.4+k3s1',
      agentConfig: {
        nodeLabels: ['tier=web'],
        nodeTaints: ['dedicated=web:NoSchedule'],
        kubeletArgs: ['max-pods=50'],
        kubeProxyArgs: ['proxy-mode=ipvs'],
      },
      serverConfig: {
        tlsSANs: ['api.demo.example'],
        disableComponents: ['traefik'],
        clusterCIDR: '10.42.0.0/16',
        serviceCIDR: '10.43.0.0/16',
        clusterDNS: '10.43.0.10',
        clusterDomain: 'cluster.local',
        kubeAPIServerArgs: ['audit-log-maxage=30'],
        kubeControllerManagerArgs: ['node-monitor-grace-period=20s'],
        kubeSchedulerArgs: ['v=2'],
      },
    },
    ...overrides,
  });

  beforeAll(async () => {
    certificates = await generateClusterCertificates('demo');
  });

  it('makes the init server initialize the cluster with the token and no server, keys sorted', () => {
    const config = k3sConfigOf(renderK3sCloudConfig(input('init-server')));
    expect(config).toEqual({
      'cluster-cidr': '10.42.0.0/16',
      'cluster-dns': '10.43.0.10',
      'cluster-domain': 'cluster.local',
      'cluster-init': true,
      disable: ['traefik'],
      'kube-apiserver-arg': ['audit-log-maxage=30'],
      'kube-controller-manager-arg': ['node-monitor-grace-period=20s'],
      'kube-proxy-arg': ['proxy-mode=ipvs'],
      'kube-scheduler-arg': ['v=2'],
      'kubelet-arg': ['max-pods=50', 'provider-id=sim://default/demo-machine'],
      'node-label': ['tier=web'],
      'node-taint': ['dedicated=web:NoSchedule'],
      'service-cidr': '10.43.0.0/16',
      'tls-san': ['api.demo.example', '192.0.2.10'],
      token: TOKEN,
    });
    expect(Object.keys(config)).toEqual(Object.keys(config).sort());
  });

  it('makes a joining server join through the endpoint', () => {
    const config = k3sConfigOf(renderK3sCloudConfig(input('join-server')));
    expect(config).toMatchObject({
      server: 'https://192.0.2.10:6443',
      token: TOKEN,
      'tls-san': ['api.demo.example', '192.0.2.10'],
    });
    expect(config).not.toHaveProperty('cluster-init');
  });

  it('gives an agent only agent settings and no server TLS material', () => {
    const text = renderK3sCloudConfig(input('agent', { certificates: undefined }));
    expect(k3sConfigOf(text)).toEqual({
      'kube-proxy-arg': ['proxy-mode=ipvs'],
      'kubelet-arg': ['max-pods=50', 'provider-id=sim://default/demo-machine'],
      'node-label': ['tier=web'],
      'node-taint': ['dedicated=web:NoSchedule'],
      server: 'https://192.0.2.10:6443',
      token: TOKEN,
    });
    expect(documentOf(text).write_files.map((f) => f.path)).toEqual(['/etc/rancher/k3s/config.yaml']);
    expect(documentOf(text).runcmd).toContain(
      "INSTALL_K3S_VERSION='v1.31.4+k3s1' INSTALL_K3S_EXEC='agent' sh /opt/k3s/install.sh",
    );
  });

  it.each(['init-server', 'join-server'] as const)(
    'writes the cluster CA material a %s needs, keys root-only',
    (role) => {
      const files = documentOf(renderK3sCloudConfig(input(role))).write_files;
      const tls = files.filter((f) => f.path.startsWith('/var/lib/rancher/k3s/server/tls/'));
      expect(tls.map((f) => [f.path, f.permissions, f.owner])).toEqual([
        ['/var/lib/rancher/k3s/server/tls/server-ca.crt', '0644', 'root:root'],
        ['/var/lib/rancher/k3s/server/tls/server-ca.key', '0600', 'root:root'],
        ['/var/lib/rancher/k3s/server/tls/client-ca.crt', '0644', 'root:root'],
        ['/var/lib/rancher/k3s/server/tls/client-ca.key', '0600', 'root:root'],
        ['/var/lib/rancher/k3s/server/tls/request-header-ca.crt', '0644', 'root:root'],
        ['/var/lib/rancher/k3s/server/tls/request-header-ca.key', '0600', 'root:root'],
        ['/var/lib/rancher/k3s/server/tls/etcd/server-ca.crt', '0644', 'root:root'],
        ['/var/lib/rancher/k3s/server/tls/etcd/server-ca.key', '0600', 'root:root'],
        ['/var/lib/rancher/k3s/server/tls/etcd/peer-ca.crt', '0644', 'root:root'],
        ['/var/lib/rancher/k3s/server/tls/etcd/peer-ca.key', '0600', 'root:root'],
        ['/var/lib/rancher/k3s/server/tls/service.key', '0600', 'root:root'],
      ]);
      const content = (path: string) => tls.find((f) => f.path.endsWith(path))!.content;
      expect(content('/server-ca.crt')).toBe(certificates.ca.certPem);
      expect(content('/client-ca.key')).toBe(certificates.cca.keyPem);
      expect(content('/request-header-ca.crt')).toBe(certificates.proxy.certPem);
      expect(content('/etcd/peer-ca.key')).toBe(certificates.etcd.keyPem);
      expect(content('/service.key')).toBe(certificates.sa.keyPem);
      expect(files[0]).toMatchObject({
        path: '/etc/rancher/k3s/config.yaml',
        owner: 'root:root',
        permissions: '0600',
      });
    },
  );

  it('runs pre commands, the download and install, post commands, then the sentinel, failing fast', () => {
    const runcmd = documentOf(
      renderK3sCloudConfig(
        input('init-server', {
          spec: {
            ...input('init-server').spec,
            preK3sCommands: ['echo pre'],
            postK3sCommands: ['echo post'],
          },
        }),
      ),
    ).runcmd;
    expect(runcmd).toEqual([
      'set -e',
      'echo pre',
      'mkdir -p /opt/k3s && curl -sfL https://get.k3s.io -o /opt/k3s/install.sh',
      "INSTALL_K3S_VERSION='v1.31.4+k3s1' INSTALL_K3S_EXEC='server' sh /opt/k3s/install.sh",
      'echo post',
      'mkdir -p /run/cluster-api && touch /run/cluster-api/bootstrap-success.complete',
    ]);
  });

  it('installs from the pre-loaded script without downloading when air-gapped', () => {
    const spec = {
      ...input('agent').spec,
      airGapped: true,
      airGappedInstallScriptPath: '/opt/images/k3s-install.sh',
    };
    const runcmd = documentOf(renderK3sCloudConfig(input('agent', { spec }))).runcmd;
    expect(runcmd.some((line) => line.includes('curl'))).toBe(false);
    expect(runcmd).toContain(
      "INSTALL_K3S_SKIP_DOWNLOAD=true INSTALL_K3S_VERSION='v1.31.4+k3s1' INSTALL_K3S_EXEC='agent' sh /opt/images/k3s-install.sh",
    );
  });

  it('writes the user files after its own, as given', () => {
    const files = [
      { path: '/etc/motd', content: 'welcome\n' },
      {
        path: '/usr/local/bin/hello',
        content: Buffer.from('#!/bin/sh\necho hi\n').toString('base64'),
        encoding: 'base64' as const,
        permissions: '0755',
        owner: 'root:root',
      },
    ];
    const written = documentOf(
      renderK3sCloudConfig(input('agent', { spec: { ...input('agent').spec, files } })),
    ).write_files;
    expect(written.slice(1)).toEqual([
      { path: '/etc/motd', content: 'welcome\n' },
      {
        path: '/usr/local/bin/hello',
        owner: 'root:root',
        permissions: '0755',
        encoding: 'base64',
        content: files[1]!.content,
      },
    ]);
  });

  it('keeps YAML 1.1 booleans and octals as strings for cloud-init and K3s', () => {
    const spec = {
      ...input('agent').spec,
      agentConfig: { nodeLabels: ['flag=on'] },
      files: [{ path: '/etc/flag', content: 'yes', permissions: '644' }],
    };
    const text = renderK3sCloudConfig(input('agent', { spec }));
    expect(text).toContain('permissions: "644"');
    expect(text).toContain('content: "yes"');
  });

  it('is byte-identical on re-render', () => {
    const rendered = renderK3sCloudConfig(input('join-server'));
    expect(renderK3sCloudConfig(structuredClone(input('join-server')))).toBe(rendered);
  });

  it.each([
    ['spec.version', { spec: { version: '1.31; rm -rf /' } }],
    [
      'spec.agentConfig.nodeLabels[1]',
      { spec: { version: 'v1.31.4+k3s1', agentConfig: { nodeLabels: ['a=b', 'no-equals'] } } },
    ],
    [
      'spec.agentConfig.nodeTaints[0]',
      { spec: { version: 'v1.31.4+k3s1', agentConfig: { nodeTaints: ['k=v:Sometimes'] } } },
    ],
    [
      'spec.agentConfig.kubeletArgs[0]',
      { spec: { version: 'v1.31.4+k3s1', agentConfig: { kubeletArgs: ['--max-pods=1'] } } },
    ],
    [
      'spec.agentConfig.kubeletArgs[0]',
      { spec: { version: 'v1.31.4+k3s1', agentConfig: { kubeletArgs: ['provider-id=aws:///x'] } } },
    ],
    [
      'spec.agentConfig.nodeName',
      { spec: { version: 'v1.31.4+k3s1', agentConfig: { nodeName: 'Upper_Case' } } },
    ],
    [
      'spec.serverConfig.tlsSANs[0]',
      { spec: { version: 'v1.31.4+k3s1', serverConfig: { tlsSANs: ['two words'] } } },
    ],
    [
      'spec.serverConfig.disableComponents[0]',
      { spec: { version: 'v1.31.4+k3s1', serverConfig: { disableComponents: ['Traefik!'] } } },
    ],
    [
      'spec.serverConfig.clusterCIDR',
      { spec: { version: 'v1.31.4+k3s1', serverConfig: { clusterCIDR: '10.42.0.0/33' } } },
    ],
    [
      'spec.agentConfig.kubeProxyArgs[0]',
      { spec: { version: 'v1.31.4+k3s1', agentConfig: { kubeProxyArgs: ['a b'] } } },
    ],
    [
      'spec.serverConfig.clusterDNS',
      { spec: { version: 'v1.31.4+k3s1', serverConfig: { clusterDNS: 'dns.local' } } },
    ],
    [
      'spec.serverConfig.clusterDomain',
      { spec: { version: 'v1.31.4+k3s1', serverConfig: { clusterDomain: 'Cluster_Local' } } },
    ],
    [
      'spec.serverConfig.kubeAPIServerArgs[0]',
      { spec: { version: 'v1.31.4+k3s1', serverConfig: { kubeAPIServerArgs: ['--v=2'] } } },
    ],
    [
      'spec.files[0].path',
      { spec: { version: 'v1.31.4+k3s1', files: [{ path: 'relative/file', content: '' }] } },
    ],
    [
      'spec.files[0].path',
      { spec: { version: 'v1.31.4+k3s1', files: [{ path: '/etc/rancher/k3s/config.yaml', content: '' }] } },
    ],
    // The node agent's files: a tenant's config there would send the agent's token elsewhere (issue 32, finding 1).
    ...[
      '/etc/capstan/agent/config.yaml',
      '/etc/capstan/agent/token',
      '/etc/capstan/agent/other',
      '/usr/local/bin/capstan-node-agent',
    ].map((path): [string, Partial<K3sBootstrapInput>] => [
      'spec.files[0].path',
      { spec: { version: 'v1.31.4+k3s1', files: [{ path, content: '' }] } },
    ]),
    // The install script in-place updates run (finding 3), online and air-gapped.
    [
      'spec.files[0].path',
      { spec: { version: 'v1.31.4+k3s1', files: [{ path: '/opt/k3s/install.sh', content: '' }] } },
    ],
    [
      'spec.files[0].path',
      {
        spec: {
          version: 'v1.31.4+k3s1',
          airGapped: true,
          airGappedInstallScriptPath: '/opt/images/install.sh',
          files: [{ path: '/opt/images/install.sh', content: '' }],
        },
      },
    ],
    [
      'spec.files[1].path',
      {
        spec: {
          version: 'v1.31.4+k3s1',
          files: [
            { path: '/a', content: '' },
            { path: '/a', content: '' },
          ],
        },
      },
    ],
    [
      'spec.files[0].permissions',
      { spec: { version: 'v1.31.4+k3s1', files: [{ path: '/a', content: '', permissions: 'rwx' }] } },
    ],
    ['spec.preK3sCommands[0]', { spec: { version: 'v1.31.4+k3s1', preK3sCommands: ['  '] } }],
    [
      'spec.airGappedInstallScriptPath',
      { spec: { version: 'v1.31.4+k3s1', airGapped: true, airGappedInstallScriptPath: '/opt/$(x).sh' } },
    ],
    ['providerID', { providerID: 'no-scheme' }],
    ['endpoint', { endpoint: { host: '192.0.2.10', port: 70000 } }],
    ['certificates', { role: 'join-server' as const, certificates: undefined }],
  ] satisfies [string, Partial<K3sBootstrapInput>][])('refuses a bad %s and names it', (field, overrides) => {
    const attempt = () => renderK3sCloudConfig({ ...input('agent'), ...overrides });
    expect(attempt).toThrow(BootstrapRenderError);
    try {
      attempt();
    } catch (error) {
      expect((error as BootstrapRenderError).field).toBe(field);
      expect((error as BootstrapRenderError).message).toContain(field);
      expect((error as BootstrapRenderError).message).not.toContain(TOKEN);
    }
  });

  it('never repeats a rejected token in its error', () => {
    const badToken = 'secret part\nwith newline';
    const error = (() => {
      try {
        renderK3sCloudConfig({ ...input('agent'), token: badToken });
      } catch (e) {
        return e as BootstrapRenderError;
      }
      throw new Error('expected a BootstrapRenderError');
    })();
    expect(error.field).toBe('token');
    expect(`${error.message} ${error.stack} ${JSON.stringify(error)}`).not.toContain('secret part');
  });
});
