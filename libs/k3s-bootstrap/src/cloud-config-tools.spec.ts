import { generateClusterCertificates, type ClusterCertificates } from '@capstan/pki';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';
import { renderK3sCloudConfig } from './cloud-config.js';
import type { K3sBootstrapInput, K3sConfigSpec } from './k3s-config-spec.js';

// The rendered documents are checked by the tools real hosts trust: cloud-init's own schema validator, and
// shellcheck on the script cloud-init makes of runcmd (a /bin/sh script, one line per entry).

function requireTool(command: string, debianPackage: string): void {
  const found = spawnSync('sh', ['-c', `command -v ${command}`], { encoding: 'utf8' });
  if (found.status !== 0) {
    throw new Error(
      `${command} is not installed; these tests need it. Install it with ` +
        `"apt-get update && apt-get install -y ${debianPackage}" (scripts/setup.sh does this when run as root).`,
    );
  }
}

function cloudInitSchema(dir: string, name: string, document: string): { ok: boolean; output: string } {
  const file = join(dir, `${name}.yaml`);
  writeFileSync(file, document);
  const result = spawnSync('cloud-init', ['schema', '--config-file', file], { encoding: 'utf8' });
  return { ok: result.status === 0, output: `${result.stdout}${result.stderr}` };
}

function shellcheck(script: string): { ok: boolean; output: string } {
  const result = spawnSync('shellcheck', ['--shell=sh', '--severity=style', '-'], {
    input: script,
    encoding: 'utf8',
  });
  return { ok: result.status === 0, output: `${result.stdout}${result.stderr}` };
}

/** What cloud-init's runcmd module writes and runs: a /bin/sh script with one line per entry. */
function runcmdScript(document: string): string {
  const { runcmd } = parse(document, { version: '1.1' }) as { runcmd: string[] };
  return `#!/bin/sh\n${runcmd.join('\n')}\n`;
}

describe('rendered bootstrap data, checked by cloud-init and shellcheck', () => {
  let dir: string;
  let certificates: ClusterCertificates;
  const endpoint = { host: '192.0.2.10', port: 6443 };
  const token = 'K10c0ffee::server:0123456789abcdef';
  const spec: K3sConfigSpec = {
    version: 'v1.31.4+k3s1',
    agentConfig: {
      nodeLabels: ['node.example.com/pool=default', 'flag=on'],
      nodeTaints: ['dedicated=infra:NoSchedule', 'node.example.com/draining:NoExecute'],
      kubeletArgs: ['max-pods=110', 'eviction-hard=memory.available<100Mi'],
      kubeProxyArgs: ['proxy-mode=ipvs'],
      nodeName: 'demo-node-0',
    },
    serverConfig: {
      tlsSANs: ['api.demo.example', '2001:db8::10'],
      disableComponents: ['traefik', 'servicelb'],
      clusterCIDR: '10.42.0.0/16,2001:cafe:42::/56',
      serviceCIDR: '10.43.0.0/16',
      clusterDNS: '10.43.0.10',
      clusterDomain: 'cluster.local',
      kubeAPIServerArgs: ['audit-log-path=/var/log/k3s-audit.log'],
      kubeControllerManagerArgs: ['node-monitor-grace-period=20s'],
      kubeSchedulerArgs: ['v=2'],
    },
  };
  const withFilesAndCommands: K3sConfigSpec = {
    ...spec,
    files: [
      { path: '/etc/motd', content: 'Managed by Capstan\n' },
      {
        path: '/etc/rancher/k3s/config.yaml.d/50-extra.yaml',
        content: 'kube-apiserver-arg:\n  - audit-log-maxage=30\n',
        permissions: '0600',
        owner: 'root:root',
      },
      {
        path: '/usr/local/bin/capstan-hello',
        content: Buffer.from('#!/bin/sh\necho "hello"\n').toString('base64'),
        encoding: 'base64',
        permissions: '0755',
      },
    ],
    preK3sCommands: [
      'swapoff -a',
      'sysctl -w net.ipv4.ip_forward=1',
      'echo "preparing $(hostname)" > /var/log/capstan-pre.log',
    ],
    postK3sCommands: [
      '/usr/local/bin/capstan-hello',
      'systemctl is-active k3s || systemctl is-active k3s-agent',
    ],
  };

  const nodeAgent = () => ({
    server: 'https://192.0.2.1:6443',
    caPem: certificates.ca.certPem,
    token: 'eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJhZ2VudCJ9.c2ln',
    namespace: 'default',
    secretName: 'md-0-x-machine-plan',
  });

  const documents = (): [string, K3sBootstrapInput][] => [
    [
      'init server',
      { role: 'init-server', spec, endpoint, token, providerID: 'sim://default/cp-0', certificates },
    ],
    [
      'joining server',
      { role: 'join-server', spec, endpoint, token, providerID: 'sim://default/cp-1', certificates },
    ],
    ['agent', { role: 'agent', spec, endpoint, token, providerID: 'sim://default/md-0-x' }],
    [
      'air-gapped server',
      { role: 'init-server', spec: { ...spec, airGapped: true }, endpoint, token, certificates },
    ],
    [
      'air-gapped agent, custom script path',
      {
        role: 'agent',
        spec: { ...spec, airGapped: true, airGappedInstallScriptPath: '/opt/images/install.sh' },
        endpoint,
        token,
      },
    ],
    [
      'server with files and commands',
      { role: 'join-server', spec: withFilesAndCommands, endpoint, token, certificates },
    ],
    ['agent with files and commands', { role: 'agent', spec: withFilesAndCommands, endpoint, token }],
    [
      'server with a node agent, files and commands',
      { role: 'init-server', spec: withFilesAndCommands, endpoint, token, certificates, nodeAgent: nodeAgent() },
    ],
    ['agent with a node agent', { role: 'agent', spec, endpoint, token, nodeAgent: nodeAgent() }],
    [
      'server with private registries',
      {
        role: 'join-server',
        spec: {
          ...spec,
          registries: {
            mirrors: { 'docker.io': { endpoint: ['https://registry.example.com:5000'] } },
            configs: {
              'registry.example.com:5000': {
                auth: { username: 'puller', password: 'yes' },
                tls: {
                  caPem: certificates.ca.certPem,
                  certPem: certificates.cca.certPem,
                  keyPem: certificates.cca.keyPem,
                },
              },
            },
          },
        },
        endpoint,
        token,
        certificates,
      },
    ],
  ];

  beforeAll(async () => {
    requireTool('cloud-init', 'cloud-init');
    requireTool('shellcheck', 'shellcheck');
    dir = mkdtempSync(join(tmpdir(), 'capstan-cloud-config-'));
    certificates = await generateClusterCertificates('demo');
  });

  afterAll(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('passes cloud-init schema for every role and variant', () => {
    for (const [name, input] of documents()) {
      const result = cloudInitSchema(dir, name.replace(/\W+/g, '-'), renderK3sCloudConfig(input));
      expect({ name, ...result }).toEqual({
        name,
        ok: true,
        output: expect.stringContaining('Valid cloud-config'),
      });
    }
  });

  it('has a runcmd script that passes shellcheck for every role and variant', () => {
    for (const [name, input] of documents()) {
      const result = shellcheck(runcmdScript(renderK3sCloudConfig(input)));
      expect({ name, ...result }).toEqual({ name, ok: true, output: '' });
    }
  });

  // The checks above must be able to fail: the same tools refuse a broken document and a sloppy script.
  it('would catch a document cloud-init refuses', () => {
    const rendered = renderK3sCloudConfig(documents()[2]![1]);
    const broken = rendered
      .replace('permissions: "0600"', 'permissions: 600')
      .replace('runcmd:\n', 'runcmd: not-a-list\nignored:\n');
    expect(cloudInitSchema(dir, 'broken', broken).ok).toBe(false);
  });

  it('would catch a runcmd shellcheck refuses', () => {
    const sloppy = renderK3sCloudConfig({
      ...documents()[2]![1],
      spec: { ...spec, preK3sCommands: ['rm -rf $TARGET/*'] },
    });
    const result = shellcheck(runcmdScript(sloppy));
    expect(result.ok).toBe(false);
    expect(result.output).toMatch(/SC2115|SC2086/);
  });
});
