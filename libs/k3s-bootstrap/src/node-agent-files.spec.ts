import { generateClusterCertificates, type ClusterCertificates } from '@capstan/pki';
import { parse } from 'yaml';
import { renderK3sCloudConfig, type CloudConfigWriteFile } from './cloud-config.js';
import { BootstrapRenderError } from './errors.js';
import type { K3sBootstrapInput } from './k3s-config-spec.js';
import { NODE_AGENT_START_LINE } from './node-agent-files.js';
import { parseK3sCloudConfig } from './parse-cloud-config.js';

describe('the node agent in the bootstrap data', () => {
  let certificates: ClusterCertificates;
  const token = 'eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJhZ2VudCJ9.c2ln';
  const input = (overrides: Partial<K3sBootstrapInput['nodeAgent']> = {}): K3sBootstrapInput => ({
    role: 'agent',
    endpoint: { host: '192.0.2.10', port: 6443 },
    token: 'K10c0ffee::server:s3cr3t',
    spec: { version: 'v1.34.4+k3s1', postK3sCommands: ['echo done'] },
    nodeAgent: {
      server: 'https://192.0.2.1:6443',
      caPem: certificates.ca.certPem,
      token,
      namespace: 'default',
      secretName: 'md-0-x-machine-plan',
      ...overrides,
    },
  });
  beforeAll(async () => {
    certificates = await generateClusterCertificates('demo');
  });

  it('writes the config (0600), CA, token (0600) and unit, and starts the agent right after K3s', () => {
    const text = renderK3sCloudConfig(input());
    const doc = parse(text, { version: '1.1' }) as { write_files: CloudConfigWriteFile[]; runcmd: string[] };
    const byPath = new Map(doc.write_files.map((f) => [f.path, f]));
    expect(byPath.get('/etc/capstan/agent/config.yaml')?.permissions).toBe('0600');
    expect(parse(byPath.get('/etc/capstan/agent/config.yaml')!.content)).toEqual({
      server: 'https://192.0.2.1:6443',
      caFile: '/etc/capstan/agent/ca.crt',
      tokenFile: '/etc/capstan/agent/token',
      namespace: 'default',
      secretName: 'md-0-x-machine-plan',
    });
    expect(byPath.get('/etc/capstan/agent/token')).toMatchObject({ permissions: '0600', content: token });
    expect(byPath.get('/etc/systemd/system/capstan-node-agent.service')?.content).toContain(
      'ExecStart=/usr/local/bin/capstan-node-agent --config /etc/capstan/agent/config.yaml',
    );
    const install = doc.runcmd.findIndex((line) => line.includes('INSTALL_K3S_EXEC'));
    expect(doc.runcmd[install + 1]).toBe(NODE_AGENT_START_LINE);

    const parsed = parseK3sCloudConfig(text);
    expect(parsed.startsNodeAgent).toBe(true);
    expect(parsed.nodeAgentFiles?.map((f) => f.path).sort()).toEqual([
      '/etc/capstan/agent/ca.crt',
      '/etc/capstan/agent/config.yaml',
      '/etc/capstan/agent/token',
      '/etc/systemd/system/capstan-node-agent.service',
    ]);
    expect(parsed.userFiles).toEqual([]);
    expect(parsed.postK3sCommands).toEqual(['echo done']);
  });

  it('leaves the agent out when none is given, and refuses a bad connection without quoting the token', () => {
    const { nodeAgent: _none, ...withoutAgent } = input();
    const parsed = parseK3sCloudConfig(renderK3sCloudConfig(withoutAgent));
    expect(parsed.startsNodeAgent).toBeUndefined();
    expect(parsed.nodeAgentFiles).toBeUndefined();
    const refused = (overrides: Partial<K3sBootstrapInput['nodeAgent']>) => {
      try {
        renderK3sCloudConfig(input(overrides));
      } catch (error) {
        expect(error).toBeInstanceOf(BootstrapRenderError);
        return (error as Error).message;
      }
      throw new Error('rendered');
    };
    expect(refused({ server: 'http://192.0.2.1:6443' })).toBe('nodeAgent.server is not an https URL');
    expect(refused({ caPem: 'nope' })).toBe('nodeAgent.caPem is not a PEM certificate');
    expect(refused({ secretName: 'Bad_Name' })).toBe('nodeAgent.secretName is not a Secret name');
    expect(refused({ token: `${token} x` })).not.toContain(token);
  });
});
