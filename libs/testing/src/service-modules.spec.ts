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

/** Imports `module` in a fresh Node and lists the files it loaded from `packageDirs` (resolve hooks see every import). */
function loadedFrom(module: string, ...packageDirs: string[]): string[] {
  const prefixes = packageDirs.map((dir) => `/node_modules/${dir}/`);
  const script = `
    import { registerHooks } from 'node:module';
    const seen = new Set();
    const prefixes = ${JSON.stringify(prefixes)};
    registerHooks({ resolve(specifier, context, next) {
      const result = next(specifier, context);
      if (prefixes.some((prefix) => result.url.includes(prefix))) seen.add(result.url.replace(/^.*node_modules\\//, ''));
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

  // class-validator's entry point loads every decorator, validator.js and libphonenumber-js (4.5 MiB of a service's
  // baseline); the decorators Capstan uses come one module each (libs/api/src/schema/class-validator.ts). The node
  // agent validates nothing with it, so only the services are asked for a decorator.
  it.each(SERVICE_MODULES.filter((module) => !module.includes('node-agent')))(
    '%s loads class-validator without its entry point',
    (module) => {
      const loaded = loadedFrom(module, 'class-validator', 'validator', 'libphonenumber-js');
      expect(loaded).toContain('class-validator/cjs/decorator/common/IsOptional.js');
      expect(loaded).not.toContain('class-validator/cjs/index.js');
      expect(loaded).not.toContain('validator/index.js');
      expect(loaded.filter((file) => file.startsWith('libphonenumber-js/'))).toEqual([]);
    },
  );
});
