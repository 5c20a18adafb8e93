import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { repoRoot } from './repo.js';

/** Each service's definition module (what main.js runs), compiled: the module graph a running service loads. */
const SERVICE_MODULES = [
  'apps/core/dist/core-service.js',
  'apps/cluster-provider/dist/service.js',
  'apps/machine-provider/dist/service.js',
  'apps/bootstrap-provider/dist/bootstrap-service.js',
  'apps/control-plane-provider/dist/control-plane-service.js',
  'apps/node-agent/dist/agent-host.js',
];

/** Imports `module` in a fresh Node and lists the files it loaded from `packageDir` (resolve hooks see every import). */
function loadedFrom(module: string, packageDir: string): string[] {
  const script = `
    import { registerHooks } from 'node:module';
    const seen = new Set();
    registerHooks({ resolve(specifier, context, next) {
      const result = next(specifier, context);
      if (result.url.includes(${JSON.stringify(`/node_modules/${packageDir}/`)})) seen.add(result.url.replace(/^.*node_modules\\//, ''));
      return result;
    } });
    await import(${JSON.stringify(join(repoRoot(), module))});
    process.stdout.write(JSON.stringify([...seen]));
    process.exit(0);
  `;
  const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], { cwd: repoRoot(), encoding: 'utf8', timeout: 60_000 });
  return JSON.parse(out) as string[];
}

// client-node's KubeConfig loads every generated API class and model (about 50 MiB of a service's memory,
// docs/performance.md); the services reach the API through libs/kube alone and load client-node only for an
// exec or auth-provider kubeconfig plugin.
describe('what a service loads', () => {
  it.each(SERVICE_MODULES)('%s does not load @kubernetes/client-node', (module) => {
    expect(loadedFrom(module, '@kubernetes/client-node')).toEqual([]);
  });

  // undici's index also loads fetch, WebSocket, its caches and mocks (13 MiB of a service's baseline); libs/kube
  // loads undici's connection pool and request call alone (connection/http-transport.ts).
  it.each(SERVICE_MODULES)('%s loads undici without its fetch', (module) => {
    const loaded = loadedFrom(module, 'undici');
    expect(loaded).toContain('undici/lib/dispatcher/agent.js');
    expect(loaded.filter((file) => file === 'undici/index.js' || file.startsWith('undici/lib/web/'))).toEqual([]);
  });
});
