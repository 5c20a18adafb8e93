import { generateClusterCertificates, type ClusterCertificates } from '@capstan/pki';
import { parse } from 'yaml';
import { renderK3sCloudConfig, type CloudConfigWriteFile } from './cloud-config.js';
import { BootstrapRenderError } from './errors.js';
import type { K3sBootstrapInput, K3sRegistries } from './k3s-config-spec.js';
import { parseK3sCloudConfig } from './parse-cloud-config.js';
import { isRegistriesPath, registriesFiles, validateRegistries } from './private-registries.js';

const PASSWORD = 'pa55-w0rd-never-logged';
const IDENTITY_TOKEN = 'identity-token-never-logged';

describe('private registries (registries.yaml)', () => {
  let certificates: ClusterCertificates;
  let registries: K3sRegistries;

  beforeAll(async () => {
    certificates = await generateClusterCertificates('demo');
    registries = {
      mirrors: {
        'docker.io': {
          endpoint: ['https://registry.example.com:5000'],
          rewrite: { '^rancher/(.*)': 'mirrorproject/rancher-images/$1' },
        },
        '*': { endpoint: ['http://10.0.0.5:5000'] },
      },
      configs: {
        'registry.example.com:5000': {
          auth: { username: 'puller', password: PASSWORD },
          tls: {
            caPem: certificates.ca.certPem,
            certPem: certificates.cca.certPem,
            keyPem: certificates.cca.keyPem,
            insecureSkipVerify: false,
          },
        },
        'quay.example.com': { auth: { identityToken: IDENTITY_TOKEN } },
        '*': { tls: { insecureSkipVerify: true } },
      },
    };
  });

  it('renders K3s registries.yaml, root-only, and the certificates it names under one directory per registry', () => {
    const [file, ...certificateFiles] = registriesFiles(registries);
    expect(file).toMatchObject({ path: '/etc/rancher/k3s/registries.yaml', permissions: '0600' });
    const dir = '/var/lib/rancher/k3s/etc/tls/registries/registry.example.com:5000';
    expect(parse(file!.content, { version: '1.1' })).toEqual({
      mirrors: {
        '*': { endpoint: ['http://10.0.0.5:5000'] },
        'docker.io': {
          endpoint: ['https://registry.example.com:5000'],
          rewrite: { '^rancher/(.*)': 'mirrorproject/rancher-images/$1' },
        },
      },
      configs: {
        '*': { tls: { insecure_skip_verify: true } },
        'quay.example.com': { auth: { identity_token: IDENTITY_TOKEN } },
        'registry.example.com:5000': {
          auth: { username: 'puller', password: PASSWORD },
          tls: {
            ca_file: `${dir}/ca.crt`,
            cert_file: `${dir}/tls.crt`,
            key_file: `${dir}/tls.key`,
            insecure_skip_verify: false,
          },
        },
      },
    });
    expect(certificateFiles).toEqual([
      { path: `${dir}/ca.crt`, permissions: '0644', content: certificates.ca.certPem },
      { path: `${dir}/tls.crt`, permissions: '0644', content: certificates.cca.certPem },
      { path: `${dir}/tls.key`, permissions: '0600', content: certificates.cca.keyPem },
    ]);
    expect(certificateFiles.every((f) => isRegistriesPath(f.path))).toBe(true);
  });

  it('is byte-identical whatever the order of the registries', () => {
    const reversed: K3sRegistries = {
      configs: Object.fromEntries(Object.entries(registries.configs!).reverse()),
      mirrors: Object.fromEntries(Object.entries(registries.mirrors!).reverse()),
    };
    expect(registriesFiles(reversed)).toEqual(registriesFiles(registries));
  });

  it('quotes what YAML 1.1 would read as another type, so K3s gets the password as written', () => {
    const [file] = registriesFiles({
      configs: { 'r.example.com': { auth: { username: 'on', password: '0644' } } },
    });
    expect(parse(file!.content, { version: '1.1' })).toEqual({
      configs: { 'r.example.com': { auth: { username: 'on', password: '0644' } } },
    });
  });

  it('puts the wildcard registry’s certificates in a directory no shell glob expands', () => {
    const files = registriesFiles({ configs: { '*': { tls: { caPem: certificates.ca.certPem } } } });
    expect(files[1]?.path).toBe('/var/lib/rancher/k3s/etc/tls/registries/_wildcard/ca.crt');
  });

  it.each([
    ['spec.privateRegistriesConfig.mirrors[docker.io/library]', { mirrors: { 'docker.io/library': {} } }],
    [
      'spec.privateRegistriesConfig.mirrors[docker.io].endpoint[0]',
      { mirrors: { 'docker.io': { endpoint: ['ftp://m'] } } },
    ],
    [
      'spec.privateRegistriesConfig.mirrors[docker.io].endpoint[0]',
      { mirrors: { 'docker.io': { endpoint: [`https://puller:${PASSWORD}@m.example.com`] } } },
    ],
    ['spec.privateRegistriesConfig.configs[../etc]', { configs: { '../etc': {} } }],
    ['spec.privateRegistriesConfig.configs[r.io].auth', { configs: { 'r.io': { auth: { username: 'u' } } } }],
    [
      'spec.privateRegistriesConfig.configs[r.io].auth',
      { configs: { 'r.io': { auth: { password: PASSWORD } } } },
    ],
    ['spec.privateRegistriesConfig.configs[r.io].auth', { configs: { 'r.io': { auth: {} } } }],
    [
      'spec.privateRegistriesConfig.configs[r.io].tls.ca',
      { configs: { 'r.io': { tls: { caPem: PASSWORD } } } },
    ],
    [
      'spec.privateRegistriesConfig.configs[r.io].tls',
      { configs: { 'r.io': { tls: { keyPem: PASSWORD } } } },
    ],
  ] satisfies [string, K3sRegistries][])('refuses %s, never repeating a credential', (field, bad) => {
    const attempt = () => validateRegistries(bad);
    expect(attempt).toThrow(BootstrapRenderError);
    try {
      attempt();
    } catch (error) {
      expect((error as BootstrapRenderError).field).toBe(field);
      expect((error as BootstrapRenderError).message).not.toContain(PASSWORD);
    }
  });

  describe('in the bootstrap data', () => {
    const input = (overrides: Partial<K3sBootstrapInput['spec']> = {}): K3sBootstrapInput => ({
      role: 'agent',
      endpoint: { host: '192.0.2.10', port: 6443 },
      token: 'K10c0ffee::server:s3cr3t-join-token',
      spec: { version: 'v1.31.4+k3s1', registries, ...overrides },
    });

    it('writes registries.yaml (root:root, 0600) and its certificates after the K3s config, before the user files', () => {
      const text = renderK3sCloudConfig(input({ files: [{ path: '/etc/motd', content: 'hi' }] }));
      const written = (parse(text, { version: '1.1' }) as { write_files: CloudConfigWriteFile[] })
        .write_files;
      expect(written.map((f) => [f.path, f.owner, f.permissions])).toEqual([
        ['/etc/rancher/k3s/config.yaml', 'root:root', '0600'],
        ['/etc/rancher/k3s/registries.yaml', 'root:root', '0600'],
        ['/var/lib/rancher/k3s/etc/tls/registries/registry.example.com:5000/ca.crt', 'root:root', '0644'],
        ['/var/lib/rancher/k3s/etc/tls/registries/registry.example.com:5000/tls.crt', 'root:root', '0644'],
        ['/var/lib/rancher/k3s/etc/tls/registries/registry.example.com:5000/tls.key', 'root:root', '0600'],
        ['/etc/motd', undefined, undefined],
      ]);
      expect(written[1]!.content).toBe(registriesFiles(registries)[0]!.content);
    });

    it('refuses a user file at a registries path while privateRegistriesConfig is set, and allows it otherwise', () => {
      for (const path of [
        '/etc/rancher/k3s/registries.yaml',
        '/var/lib/rancher/k3s/etc/tls/registries/r/ca.crt',
      ]) {
        const attempt = () => renderK3sCloudConfig(input({ files: [{ path, content: 'mirrors: {}' }] }));
        expect(attempt).toThrow(/spec\.files\[0\]\.path is written from spec\.privateRegistriesConfig/);
      }
      const own = input({
        registries: undefined,
        files: [{ path: '/etc/rancher/k3s/registries.yaml', content: 'x' }],
      });
      expect(renderK3sCloudConfig(own)).toContain('path: /etc/rancher/k3s/registries.yaml');
    });

    it('is read back by the cloud-config parser as another written file', () => {
      const parsed = parseK3sCloudConfig(renderK3sCloudConfig(input()));
      const file = parsed.userFiles.find((f) => f.path === '/etc/rancher/k3s/registries.yaml');
      expect(file?.permissions).toBe('0600');
      expect(parse(file!.content.toString('utf8'), { version: '1.1' })).toMatchObject({
        configs: { 'registry.example.com:5000': { auth: { username: 'puller', password: PASSWORD } } },
      });
    });
  });
});
