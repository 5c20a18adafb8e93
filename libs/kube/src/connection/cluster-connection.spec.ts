import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { ClusterConnection, connectionFromKubeconfig, defaultConnection, inClusterConnection, loadConnection } from './cluster-connection.js';
import { KubeconfigError, parseKubeconfig, readKubeconfigFiles } from './kubeconfig.js';

const CA = '-----BEGIN CERTIFICATE-----\nca\n-----END CERTIFICATE-----\n';
const CERT = '-----BEGIN CERTIFICATE-----\nclient\n-----END CERTIFICATE-----\n';
const KEY = '-----BEGIN EC PRIVATE KEY-----\nkey\n-----END EC PRIVATE KEY-----\n';
const b64 = (text: string) => Buffer.from(text).toString('base64');

function kubeconfig(overrides: { cluster?: object; user?: object; context?: object; current?: string } = {}) {
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [
      { name: 'mgmt', cluster: { server: 'https://127.0.0.1:6443/', 'certificate-authority-data': b64(CA), ...overrides.cluster } },
      { name: 'other', cluster: { server: 'https://other:6443' } },
    ],
    users: [{ name: 'admin', user: { 'client-certificate-data': b64(CERT), 'client-key-data': b64(KEY), ...overrides.user } }],
    contexts: [
      { name: 'admin@mgmt', context: { cluster: 'mgmt', user: 'admin', namespace: 'capstan-system', ...overrides.context } },
      { name: 'other', context: { cluster: 'other', user: 'admin' } },
    ],
    'current-context': overrides.current ?? 'admin@mgmt',
  });
}

function tempDir() {
  return mkdtempSync(join(tmpdir(), 'capstan-kubeconfig-'));
}

describe('parseKubeconfig', () => {
  it("reads the current context's server, CA, client certificate and namespace", () => {
    expect(parseKubeconfig(kubeconfig())).toEqual({
      context: 'admin@mgmt',
      server: 'https://127.0.0.1:6443',
      caPem: CA,
      clientCertificatePem: CERT,
      clientKeyPem: KEY,
      namespace: 'capstan-system',
    });
  });

  it('selects another context when asked', () => {
    expect(parseKubeconfig(kubeconfig(), { context: 'other' })).toMatchObject({ context: 'other', server: 'https://other:6443' });
  });

  it('reads file references relative to the kubeconfig, as kubectl does', () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'ca.crt'), CA);
    writeFileSync(join(dir, 'token'), 'from-file\n');
    const text = kubeconfig({ cluster: { 'certificate-authority-data': undefined, 'certificate-authority': 'ca.crt' }, user: { tokenFile: 'token' } });
    const selection = parseKubeconfig(text, { baseDir: dir });
    expect(selection.caPem).toBe(CA);
    expect(selection.tokenFile).toBe(join(dir, 'token'));
  });

  it('says what is wrong without quoting the document', () => {
    expect(() => parseKubeconfig('token: [secret-value', { origin: 'Secret ns/c-kubeconfig' })).toThrow(
      new KubeconfigError('Secret ns/c-kubeconfig is not valid YAML'),
    );
    try {
      parseKubeconfig('users: [{name: a, user: {token: secret-value}}]\ncurrent-context: x');
    } catch (error) {
      expect(String(error)).not.toContain('secret-value');
      expect(String(error)).toContain('has no context "x"');
    }
    expect(() => parseKubeconfig(kubeconfig({ current: '' }))).toThrow('names no current context');
    expect(() => parseKubeconfig(kubeconfig({ context: { cluster: 'gone' } }))).toThrow('names no known cluster');
    expect(() => parseKubeconfig(kubeconfig({ cluster: { 'proxy-url': 'http://proxy:3128' } }))).toThrow('proxy-url');
  });

  it('marks exec and auth-provider users as needing a plugin, and treats a tokenFile auth provider as a token file', () => {
    expect(parseKubeconfig(kubeconfig({ user: { exec: { command: 'aws' } } })).plugin).toBe('exec');
    expect(parseKubeconfig(kubeconfig({ user: { 'auth-provider': { name: 'oidc' } } })).plugin).toBe('auth-provider');
    const fromClientNode = parseKubeconfig(kubeconfig({ user: { 'auth-provider': { name: 'tokenFile', config: { tokenFile: '/t' } } } }));
    expect(fromClientNode).toMatchObject({ tokenFile: '/t' });
    expect(fromClientNode.plugin).toBeUndefined();
  });
});

describe('readKubeconfigFiles', () => {
  it("merges KUBECONFIG's files, the first naming an entry winning, and skips missing ones", () => {
    const dir = tempDir();
    const first = join(dir, 'a');
    const second = join(dir, 'b');
    writeFileSync(first, stringify({ 'current-context': 'other', clusters: [{ name: 'other', cluster: { server: 'https://first:1' } }] }));
    writeFileSync(second, kubeconfig());
    expect(readKubeconfigFiles([join(dir, 'missing'), first, second])).toMatchObject({ context: 'other', server: 'https://first:1' });
    expect(() => readKubeconfigFiles([join(dir, 'missing')])).toThrow(`${join(dir, 'missing')} cannot be read (ENOENT)`);
  });
});

describe('ClusterConnection', () => {
  it('gives TLS settings and the client certificate for every connection', () => {
    const connection = connectionFromKubeconfig(kubeconfig({ cluster: { 'tls-server-name': 'kubernetes' } }));
    expect(connection.tls).toEqual({ ca: CA, cert: CERT, key: KEY, rejectUnauthorized: true, servername: 'kubernetes' });
    expect(connectionFromKubeconfig(kubeconfig({ cluster: { 'insecure-skip-tls-verify': true } })).tls.rejectUnauthorized).toBe(false);
  });

  it('authenticates with a bearer token, basic auth, or nothing beyond the certificate', async () => {
    expect(await connectionFromKubeconfig(kubeconfig({ user: { token: 't0k' } })).authenticationHeaders('https://x')).toEqual({
      Authorization: 'Bearer t0k',
    });
    expect(await connectionFromKubeconfig(kubeconfig({ user: { username: 'u', password: 'p' } })).authenticationHeaders('https://x')).toEqual({
      Authorization: `Basic ${b64('u:p')}`,
    });
    expect(await connectionFromKubeconfig(kubeconfig()).authenticationHeaders('https://x')).toEqual({});
  });

  it('reads a token file and keeps it for a minute (a projected token rotates)', async () => {
    const dir = tempDir();
    const token = join(dir, 'token');
    writeFileSync(token, 'first\n');
    const connection = new ClusterConnection({ context: 'c', server: 'https://x', tokenFile: token });
    expect(await connection.authenticationHeaders('https://x')).toEqual({ Authorization: 'Bearer first' });
    writeFileSync(token, 'second\n');
    expect(await connection.authenticationHeaders('https://x')).toEqual({ Authorization: 'Bearer first' });
    const later = Date.now() + 61_000;
    const realNow = Date.now;
    Date.now = () => later;
    try {
      expect(await connection.authenticationHeaders('https://x')).toEqual({ Authorization: 'Bearer second' });
    } finally {
      Date.now = realNow;
    }
  });

  it("resolves an exec plugin through client-node's implementation", async () => {
    const text = kubeconfig({
      user: {
        'client-certificate-data': undefined,
        'client-key-data': undefined,
        exec: {
          apiVersion: 'client.authentication.k8s.io/v1',
          command: process.execPath,
          args: ['-e', 'console.log(JSON.stringify({apiVersion:"client.authentication.k8s.io/v1",kind:"ExecCredential",status:{token:"from-exec"}}))'],
          interactiveMode: 'Never',
        },
      },
    });
    expect(await connectionFromKubeconfig(text).authenticationHeaders('https://127.0.0.1:6443')).toEqual({ Authorization: 'Bearer from-exec' });
  });

  it("takes client-node's KubeConfig as the tests and the CLI hold it", async () => {
    const { KubeConfig } = await import('@kubernetes/client-node');
    const kc = new KubeConfig();
    kc.loadFromString(kubeconfig({ user: { token: 't0k' } }));
    kc.setCurrentContext('other');
    const connection = loadConnection(kc);
    expect(connection.server).toBe('https://other:6443');
    expect(await connection.authenticationHeaders('https://other:6443')).toEqual({ Authorization: 'Bearer t0k' });
  });

  it('finds the pod service account, and the default rules find $KUBECONFIG', () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'ca.crt'), CA);
    writeFileSync(join(dir, 'token'), 'sa-token');
    writeFileSync(join(dir, 'namespace'), 'capstan-system\n');
    const saved = { ...process.env };
    try {
      process.env['KUBERNETES_SERVICE_HOST'] = 'fd00::1';
      process.env['KUBERNETES_SERVICE_PORT'] = '443';
      const inCluster = inClusterConnection(dir);
      expect(inCluster.server).toBe('https://[fd00::1]:443');
      expect(inCluster.namespace).toBe('capstan-system');
      expect(inCluster.tls.ca).toBe(CA);
      delete process.env['KUBERNETES_SERVICE_HOST'];
      expect(() => inClusterConnection(dir)).toThrow('not running in a cluster');
      const file = join(dir, 'config');
      writeFileSync(file, kubeconfig());
      process.env['KUBECONFIG'] = file;
      expect(defaultConnection().server).toBe('https://127.0.0.1:6443');
    } finally {
      process.env = saved;
    }
  });
});
