import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { failureContext, resetFailureContext } from '../errors/failure-context.js';
import { loadKubeConfig, resolveKubeconfigSource } from '../kubeconfig.js';
import { CliError } from '../output.js';
import { DEFAULT_NATS_URL, locateEnvFile, readLocalEnv, resolveNatsTarget } from './local-env.js';

describe('the local environment file and what the CLI connects to', () => {
  let dir: string;
  /** A repository-like tree: <dir>/repo/.capstan/env.json, the CLI in <dir>/repo/apps/cli/dist. */
  let repo: string;
  let cliDir: string;
  let elsewhere: string;

  const writeEnv = (root: string, content: unknown) => {
    mkdirSync(join(root, '.capstan'), { recursive: true });
    const file = join(root, '.capstan', 'env.json');
    writeFileSync(file, typeof content === 'string' ? content : JSON.stringify(content));
    return file;
  };

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'capstan-local-env-'));
    repo = join(dir, 'repo');
    cliDir = join(repo, 'apps', 'cli', 'dist', 'runtime');
    elsewhere = join(dir, 'elsewhere', 'deeper');
    mkdirSync(cliDir, { recursive: true });
    mkdirSync(elsewhere, { recursive: true });
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  describe('locateEnvFile', () => {
    it('finds the repository’s env.json from where the CLI runs', () => {
      const file = writeEnv(repo, {});
      expect(locateEnvFile({ env: {}, cwd: elsewhere, cliDir })).toBe(file);
    });

    it('prefers the nearest one above the current directory', () => {
      writeEnv(repo, {});
      const near = writeEnv(join(dir, 'elsewhere'), {});
      expect(locateEnvFile({ env: {}, cwd: elsewhere, cliDir })).toBe(near);
    });

    it('is none when there is none', () => {
      expect(locateEnvFile({ env: {}, cwd: elsewhere, cliDir })).toBeUndefined();
    });

    it('takes $CAPSTAN_ENV_FILE instead of searching; empty turns the lookup off', () => {
      writeEnv(repo, {});
      const other = join(dir, 'other.json');
      writeFileSync(other, '{}');
      expect(locateEnvFile({ env: { CAPSTAN_ENV_FILE: other }, cwd: elsewhere, cliDir })).toBe(other);
      expect(locateEnvFile({ env: { CAPSTAN_ENV_FILE: '' }, cwd: elsewhere, cliDir })).toBeUndefined();
      expect(locateEnvFile({ env: { CAPSTAN_ENV_FILE: join(dir, 'missing.json') }, cwd: elsewhere, cliDir })).toBeUndefined();
    });
  });

  describe('readLocalEnv', () => {
    it('reads the NATS URL and the kubeconfig path (relative ones from the repository root)', () => {
      const file = writeEnv(repo, {
        natsUrl: 'nats://127.0.0.1:39999',
        kubeconfig: '.capstan/env/kubeconfig',
        etcdUrl: 'http://127.0.0.1:39379',
        simStateDir: '/state/sim',
        pids: {},
      });
      expect(readLocalEnv({ env: {}, cwd: elsewhere, cliDir })).toEqual({
        file,
        natsUrl: 'nats://127.0.0.1:39999',
        kubeconfig: join(repo, '.capstan', 'env', 'kubeconfig'),
        etcdUrl: 'http://127.0.0.1:39379',
        simStateDir: '/state/sim',
      });
    });

    it('says which file is broken and how to renew it', () => {
      const file = writeEnv(repo, '{ not json');
      expect(() => readLocalEnv({ env: {}, cwd: elsewhere, cliDir })).toThrow(CliError);
      expect(() => readLocalEnv({ env: {}, cwd: elsewhere, cliDir })).toThrow(new RegExp(`${file}.*npm run env:down && npm run env:up`));
    });
  });

  describe('resolveNatsTarget', () => {
    it('--nats-url, then $NATS_URL, then env.json, then the default', () => {
      const file = writeEnv(repo, { natsUrl: 'nats://127.0.0.1:39999' });
      const where = { cwd: elsewhere, cliDir };
      expect(resolveNatsTarget('nats://flag:1', { ...where, env: { NATS_URL: 'nats://env:2' } })).toEqual({
        url: 'nats://flag:1',
        origin: { kind: 'flag', flag: '--nats-url' },
      });
      expect(resolveNatsTarget(undefined, { ...where, env: { NATS_URL: 'nats://env:2' } })).toEqual({
        url: 'nats://env:2',
        origin: { kind: 'env', variable: 'NATS_URL' },
      });
      expect(resolveNatsTarget(undefined, { ...where, env: {} })).toEqual({
        url: 'nats://127.0.0.1:39999',
        origin: { kind: 'env-file', file },
      });
      expect(resolveNatsTarget(undefined, { ...where, env: { CAPSTAN_ENV_FILE: '' } })).toEqual({
        url: DEFAULT_NATS_URL,
        origin: { kind: 'default' },
      });
    });
  });

  describe('resolveKubeconfigSource', () => {
    it('--kubeconfig, then $KUBECONFIG (every file), then env.json, then ~/.kube/config', () => {
      const file = writeEnv(repo, { kubeconfig: '/env/kubeconfig' });
      const home = join(dir, 'home');
      mkdirSync(join(home, '.kube'), { recursive: true });
      writeFileSync(join(home, '.kube', 'config'), '');
      const where = { cwd: elsewhere, cliDir, home };
      expect(resolveKubeconfigSource({ kubeconfig: '/flag' }, { ...where, env: { KUBECONFIG: '/a' } })).toEqual({
        files: ['/flag'],
        origin: { kind: 'flag', flag: '--kubeconfig' },
      });
      expect(resolveKubeconfigSource({}, { ...where, env: { KUBECONFIG: '/a:/b' } })).toEqual({
        files: ['/a', '/b'],
        origin: { kind: 'env', variable: 'KUBECONFIG' },
      });
      expect(resolveKubeconfigSource({}, { ...where, env: {} })).toEqual({ files: ['/env/kubeconfig'], origin: { kind: 'env-file', file } });
      expect(resolveKubeconfigSource({}, { ...where, env: { CAPSTAN_ENV_FILE: '' } })).toEqual({
        files: [join(home, '.kube', 'config')],
        origin: { kind: 'default' },
      });
    });

    it('without any kubeconfig, says where it looked and how to get one', () => {
      const home = join(dir, 'empty-home');
      expect(() =>
        resolveKubeconfigSource({}, { cwd: elsewhere, cliDir, home, env: {}, serviceAccountTokenFile: join(dir, 'no-token') }),
      ).toThrow(new RegExp(`no kubeconfig.*${join(home, '.kube', 'config')} does not exist.*npm run env:up`));
    });
  });

  describe('loadKubeConfig', () => {
    beforeEach(() => resetFailureContext());

    it('names a missing file, where its path came from and the fix', () => {
      expect(() => loadKubeConfig({}, { env: { KUBECONFIG: '/nonexistent' } })).toThrow(
        'kubeconfig /nonexistent does not exist (from $KUBECONFIG); point KUBECONFIG at a kubeconfig file that exists, or unset it',
      );
      const file = writeEnv(repo, { kubeconfig: join(dir, 'gone.kubeconfig') });
      expect(() => loadKubeConfig({}, { env: {}, cwd: elsewhere, cliDir })).toThrow(`from ${file}); the local environment in ${file} is gone`);
    });

    it('records the API server it will talk to, for errors that happen later', () => {
      const kubeconfig = join(dir, 'kubeconfig');
      writeFileSync(
        kubeconfig,
        [
          'apiVersion: v1',
          'kind: Config',
          'clusters: [{name: c, cluster: {server: "https://127.0.0.1:6443"}}]',
          'users: [{name: u, user: {token: t}}]',
          'contexts: [{name: one, context: {cluster: c, user: u}}]',
          'current-context: one',
        ].join('\n'),
      );
      loadKubeConfig({ kubeconfig });
      expect(failureContext().kube).toEqual({
        server: 'https://127.0.0.1:6443',
        kubeconfig,
        origin: { kind: 'flag', flag: '--kubeconfig' },
      });
      expect(() => loadKubeConfig({ kubeconfig, kubeconfigContext: 'two' })).toThrow(`context "two" is not in kubeconfig ${kubeconfig} (from --kubeconfig); it has: one`);
    });
  });
});
