import {
  generateClusterCertificates,
  issueClientCertificate,
  loadCertificateAuthority,
  type ClusterCertificates,
} from '@capstan/pki';
import { X509Certificate } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { renderK3sCloudConfig } from './cloud-config.js';
import { BootstrapDataError } from './errors.js';
import type { K3sBootstrapInput, K3sConfigSpec } from './k3s-config-spec.js';
import { parseK3sCloudConfig, requireServerTls } from './parse-cloud-config.js';

const TOKEN = 'K10feedbeef::server:do-not-leak-7f3a9c';

const spec: K3sConfigSpec = {
  version: 'v1.31.4+k3s1',
  agentConfig: {
    nodeLabels: ['node.example.com/pool=blue', 'tier='],
    nodeTaints: ['dedicated=infra:NoSchedule', 'node.example.com/maintenance:NoExecute'],
    kubeletArgs: ['max-pods=110'],
    kubeProxyArgs: ['proxy-mode=ipvs'],
    nodeName: 'node-a',
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
    secretsEncryption: true,
  },
  files: [
    { path: '/etc/motd', content: 'hello\n', permissions: '0644', owner: 'root:root' },
    { path: '/opt/blob.gz', content: gzipSync('zipped\n').toString('base64'), encoding: 'gzip+base64' },
  ],
  preK3sCommands: ['echo pre-1', 'echo pre-2'],
  postK3sCommands: ['echo post'],
};

describe('parseK3sCloudConfig', () => {
  let certificates: ClusterCertificates;
  const render = (overrides: Partial<K3sBootstrapInput>) =>
    renderK3sCloudConfig({
      role: 'agent',
      spec,
      endpoint: { host: 'api.demo.example', port: 16443 },
      token: TOKEN,
      providerID: 'sim://default/demo-0',
      certificates,
      ...overrides,
    });

  beforeAll(async () => {
    certificates = await generateClusterCertificates('demo');
  });

  it('reads back everything an agent needs', () => {
    const parsed = parseK3sCloudConfig(render({ role: 'agent' }));
    expect(parsed).toEqual({
      role: 'agent',
      version: 'v1.31.4+k3s1',
      airGapped: false,
      installScriptPath: '/opt/k3s/install.sh',
      token: TOKEN,
      serverUrl: 'https://api.demo.example:16443',
      endpoint: { host: 'api.demo.example', port: 16443 },
      providerID: 'sim://default/demo-0',
      nodeName: 'node-a',
      nodeLabels: { 'node.example.com/pool': 'blue', tier: '' },
      nodeTaints: [
        { key: 'dedicated', value: 'infra', effect: 'NoSchedule' },
        { key: 'node.example.com/maintenance', effect: 'NoExecute' },
      ],
      kubeletArgs: ['max-pods=110'],
      kubeProxyArgs: ['proxy-mode=ipvs'],
      tlsSANs: [],
      disableComponents: [],
      kubeAPIServerArgs: [],
      kubeControllerManagerArgs: [],
      kubeSchedulerArgs: [],
      // Agents never read server settings: secrets-encryption is not in their config.
      secretsEncryption: false,
      serverTls: {},
      userFiles: [
        { path: '/etc/motd', owner: 'root:root', permissions: '0644', content: Buffer.from('hello\n') },
        { path: '/opt/blob.gz', content: Buffer.from('zipped\n') },
      ],
      preK3sCommands: ['echo pre-1', 'echo pre-2'],
      postK3sCommands: ['echo post'],
    });
  });

  it('reads back the init server: role, server settings and the complete TLS material', () => {
    const parsed = parseK3sCloudConfig(render({ role: 'init-server' }));
    // Every server setting comes back as given; the endpoint host was already among the TLS SANs.
    expect(parsed).toMatchObject({
      role: 'init-server',
      token: TOKEN,
      ...spec.serverConfig,
      kubeProxyArgs: spec.agentConfig?.kubeProxyArgs,
    });
    expect(parsed.serverUrl).toBeUndefined();
    expect(requireServerTls(parsed)).toEqual({
      serverCA: certificates.ca,
      clientCA: certificates.cca,
      requestHeaderCA: certificates.proxy,
      etcdServerCA: certificates.etcd,
      etcdPeerCA: certificates.etcd,
      serviceAccountKeyPem: certificates.sa.keyPem,
    });
  });

  it('gives a joining server TLS material that works: its client CA signs certificates', async () => {
    const parsed = parseK3sCloudConfig(
      render({ role: 'join-server', endpoint: { host: '2001:db8::1', port: 6443 } }),
    );
    expect(parsed.role).toBe('join-server');
    expect(parsed.endpoint).toEqual({ host: '2001:db8::1', port: 6443 });
    const clientCA = await loadCertificateAuthority(requireServerTls(parsed).clientCA);
    const node = await issueClientCertificate(clientCA, {
      commonName: 'system:node:node-a',
      organizations: ['system:nodes'],
    });
    expect(
      new X509Certificate(node.certPem).verify(new X509Certificate(certificates.cca.certPem).publicKey),
    ).toBe(true);
  });

  it('reads the air-gapped install', () => {
    const parsed = parseK3sCloudConfig(
      render({ spec: { ...spec, airGapped: true, airGappedInstallScriptPath: '/srv/k3s/install.sh' } }),
    );
    expect(parsed).toMatchObject({
      airGapped: true,
      installScriptPath: '/srv/k3s/install.sh',
      preK3sCommands: ['echo pre-1', 'echo pre-2'],
    });
  });

  it('says which server TLS file an agent document lacks', () => {
    const parsed = parseK3sCloudConfig(render({ role: 'agent' }));
    expect(() => requireServerTls(parsed)).toThrow(
      expect.objectContaining({
        reason: 'MissingCertificate',
        field: '/var/lib/rancher/k3s/server/tls/server-ca.crt',
      }),
    );
  });

  // Each case breaks the document in one place; the error must name that place and carry no content.
  const agentDocument = () => render({ role: 'agent' });
  const serverDocument = () => render({ role: 'join-server' });
  const cases: [string, () => string, Partial<BootstrapDataError>][] = [
    ['a shell script', () => `#!/bin/sh\necho ${TOKEN}\n`, { reason: 'NotCloudConfig', field: 'header' }],
    [
      'invalid YAML on the token line',
      () => agentDocument().replace(`token: ${TOKEN}`, `token: [${TOKEN}`),
      { reason: 'InvalidYaml', field: '/etc/rancher/k3s/config.yaml' },
    ],
    [
      'invalid YAML in the document',
      () => `#cloud-config\nwrite_files: [\n  {content: "${TOKEN}"\n`,
      { reason: 'InvalidYaml', field: 'cloud-config' },
    ],
    [
      'no K3s config',
      () => agentDocument().replace('path: /etc/rancher/k3s/config.yaml', 'path: /etc/other.yaml'),
      { reason: 'MissingK3sConfig', field: '/etc/rancher/k3s/config.yaml' },
    ],
    [
      'no token',
      () => agentDocument().replace(`      token: ${TOKEN}\n`, ''),
      { reason: 'MissingField', field: '/etc/rancher/k3s/config.yaml:token' },
    ],
    [
      'a token that is not a string',
      () => agentDocument().replace(`      token: ${TOKEN}\n`, `      token:\n        value: ${TOKEN}\n`),
      { reason: 'InvalidField', field: '/etc/rancher/k3s/config.yaml:token' },
    ],
    [
      'no install command',
      () => agentDocument().replace(/ {2}- INSTALL_K3S_VERSION=.*\n/, `  - echo ${TOKEN}\n`),
      { reason: 'MissingInstallCommand', field: 'runcmd' },
    ],
    [
      'an agent without server',
      () => agentDocument().replace(/ {6}server: .*\n/, ''),
      { reason: 'InconsistentRole', field: '/etc/rancher/k3s/config.yaml' },
    ],
    [
      'a server that both initializes and joins',
      () => serverDocument().replace('      server:', '      cluster-init: true\n      server:'),
      { reason: 'InconsistentRole', field: '/etc/rancher/k3s/config.yaml' },
    ],
    [
      'a server URL that is not https',
      () => agentDocument().replace('server: https://', `server: http://${TOKEN}@`),
      { reason: 'InvalidField', field: '/etc/rancher/k3s/config.yaml:server' },
    ],
    [
      'a malformed node label',
      () => agentDocument().replace('        - tier=\n', `        - ${TOKEN}\n`),
      { reason: 'InvalidField', field: '/etc/rancher/k3s/config.yaml:node-label[1]' },
    ],
    [
      'a malformed taint',
      () => agentDocument().replace('        - dedicated=infra:NoSchedule\n', `        - ${TOKEN}:Never\n`),
      { reason: 'InvalidField', field: '/etc/rancher/k3s/config.yaml:node-taint[0]' },
    ],
    [
      'an unknown file encoding',
      () => agentDocument().replace('encoding: gzip+base64', 'encoding: rot13'),
      { reason: 'UnsupportedEncoding', field: 'write_files[2].content' },
    ],
    [
      'files that inflate past the limit (a gzip bomb)',
      () =>
        agentDocument().replace(
          gzipSync('zipped\n').toString('base64'),
          gzipSync(Buffer.alloc(32 * 1024 * 1024)).toString('base64'),
        ),
      { reason: 'TooLarge', field: 'write_files[2].content' },
    ],
    [
      'a file path climbing out of the machine',
      () => agentDocument().replace('path: /opt/blob.gz', `path: /../../../etc/${TOKEN}`),
      { reason: 'InvalidField', field: 'write_files[2].path' },
    ],
    [
      'a relative file path',
      () => agentDocument().replace('path: /opt/blob.gz', 'path: opt/blob.gz'),
      { reason: 'InvalidField', field: 'write_files[2].path' },
    ],
    [
      'a CA certificate without its key',
      () => serverDocument().replace('tls/client-ca.key', 'tls/client-ca.key.bak'),
      { reason: 'MissingCertificate', field: '/var/lib/rancher/k3s/server/tls/client-ca.key' },
    ],
    [
      'runcmd that is not a list',
      () => agentDocument().replace(/runcmd:\n[\s\S]*$/, `runcmd: echo ${TOKEN}\n`),
      { reason: 'MissingField', field: 'runcmd' },
    ],
  ];

  it.each(cases)(
    'refuses %s, naming what it could not read and never the token',
    (_name, broken, expected) => {
      const document = broken();
      let error: unknown;
      try {
        parseK3sCloudConfig(document);
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(BootstrapDataError);
      expect(error).toMatchObject(expected);
      const { message, stack } = error as BootstrapDataError;
      expect(message).toContain(expected.field);
      for (const text of [message, stack ?? '', JSON.stringify(error), String(error)]) {
        expect(text).not.toContain(TOKEN);
        expect(text).not.toContain('do-not-leak');
      }
    },
  );
});
