import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { dockerEngine, type DockerEngine } from '../docker-daemon.js';
import { repoRoot } from '../repo.js';
import { CONTEXT_TARS, SERVICE_APPS } from './build-context.js';
import { runDocker } from './docker-cli.js';
import { buildServiceImages, type ServiceImages } from './service-images.js';

/**
 * Builds the six images with the project's dockerd (or the engine on DOCKER_HOST) as `npm run images` does: warm, a
 * build only checks that every image is current. Needs the sim's Go binaries in the binary cache (`npm run setup`).
 */
describe('the service images', () => {
  let engine: DockerEngine;
  let built: ServiceImages;
  const docker = (...args: string[]) => runDocker({ socketPath: engine.socketPath, args });
  const image = (app: (typeof SERVICE_APPS)[number]) => built.services.find((s) => s.app === app)!.tag;

  beforeAll(async () => {
    // The images hold the compiled dist/ trees: compile what changed since the last build (incremental).
    execFileSync(process.execPath, ['scripts/build.mjs'], { cwd: repoRoot(), stdio: 'ignore' });
    engine = await dockerEngine();
    built = await buildServiceImages({ socketPath: engine.socketPath });
  }, 600_000);

  it('start every service as the nonroot user on a read-only root filesystem', async () => {
    for (const app of SERVICE_APPS) {
      // --help is answered after every module of the service is loaded: node_modules and the workspace links resolve.
      const help = await docker(
        'run',
        '--rm',
        '--read-only',
        '--network=none',
        '--user=65532:65532',
        image(app),
        '--help',
      );
      expect([app, help.split('\n')[0]]).toEqual([app, `Usage: capstan-${app} [options]`]);
    }
  });

  it('give the machine provider every staged Go binary where the sim looks for it, and each runs', async () => {
    const script = `
      const host = await import('@capstan/testing/local-host');
      const { execFileSync } = await import('node:child_process');
      const run = (path) => ({ path, version: execFileSync(path, ['--version'], { encoding: 'utf8' }).trim() });
      const main = host.resolveControlPlaneBinaries();
      process.stdout.write(JSON.stringify({
        root: host.repoRoot(),
        etcd: run(main.etcd),
        apiservers: host.pinnedKubeApiserverVersions().map(({ version }) => host.resolveKubeApiserverVersion(version))
          .filter((found) => found !== undefined).map((found) => run(found.path)),
        controllerManager: run(host.resolveKubeComponent('kube-controller-manager')),
        scheduler: run(host.resolveKubeComponent('kube-scheduler')),
      }));`;
    const found = JSON.parse(
      await docker(
        'run',
        '--rm',
        '--read-only',
        '--network=none',
        '--entrypoint=node',
        image('machine-provider'),
        '--input-type=module',
        '-e',
        script,
      ),
    ) as Record<'etcd' | 'controllerManager' | 'scheduler', { path: string; version: string }> & {
      root: string;
      apiservers: { path: string; version: string }[];
    };
    const staged = built.context.goBinaries;
    const cached = (name: string, version: string) =>
      `/opt/capstan-cache/capstan/bin/${name}/${version}/${name}`;
    expect(staged.map((b) => b.imagePath)).toEqual(staged.map((b) => cached(b.name, b.version)));
    const etcd = staged.find((b) => b.name === 'etcd')!;
    expect(found.root).toBe('/app');
    expect(found.etcd).toEqual({
      path: cached('etcd', etcd.version),
      version: expect.stringContaining(`etcd Version: ${etcd.version.slice(1)}`),
    });
    expect(found.apiservers).toEqual(
      staged
        .filter((b) => b.name === 'kube-apiserver')
        .map((b) => ({ path: cached(b.name, b.version), version: `Kubernetes ${b.version}` })),
    );
    for (const [name, binary] of [
      ['kube-controller-manager', found.controllerManager],
      ['kube-scheduler', found.scheduler],
    ] as const) {
      const version = staged.find((b) => b.name === name)!.version;
      expect(binary).toEqual({ path: cached(name, version), version: `Kubernetes ${version}` });
    }
  });

  it('give the dashboard the files it reads at run time: its page (apps/dashboard/web) and the cluster templates', async () => {
    // Its WebController reads the page's files (and lit-html's) when it is made, relative to its compiled module: made
    // here as Nest makes it. The create form offers the built-in templates, read from libs/cluster-templates/templates.
    const script = `
      const { readdirSync } = await import('node:fs');
      const { WebController } = await import('/app/apps/dashboard/dist/api/web.controller.js');
      new WebController();
      const templates = await import('@capstan/cluster-templates');
      process.stdout.write(JSON.stringify({
        web: readdirSync('/app/apps/dashboard/web').sort(),
        templates: templates.builtInTemplates().map((t) => templates.builtInTemplate(t.infrastructure, t.flavor).length > 0),
        templateFiles: readdirSync(templates.templatesDir()).sort(),
      }));`;
    const found = JSON.parse(
      await docker(
        'run',
        '--rm',
        '--read-only',
        '--network=none',
        '--user=65532:65532',
        '--entrypoint=node',
        image('dashboard'),
        '--input-type=module',
        '-e',
        script,
      ),
    ) as { web: string[]; templates: boolean[]; templateFiles: string[] };
    expect(found.web).toEqual(readdirSync(join(repoRoot(), 'apps/dashboard/web')).sort());
    expect(found.templateFiles).toEqual(
      readdirSync(join(repoRoot(), 'libs/cluster-templates/templates')).sort(),
    );
    expect(found.templates.length).toBeGreaterThan(0);
    expect(found.templates.every(Boolean)).toBe(true);
  });

  it('name the Dockerfile line that made each layer over 50 MiB', () => {
    const machineProvider = built.services.find((s) => s.app === 'machine-provider')!;
    expect(machineProvider.largeLayers.map((layer) => layer.instruction)).toEqual(
      expect.arrayContaining([`ADD rootfs.tar / (${built.base.tag})`, 'ADD go-cache/kube-apiserver.tar /']),
    );
    for (const image of built.services)
      expect(image.largeLayers.every((layer) => layer.instruction)).toBe(true);
  });

  it('share one node_modules layer among the six images', async () => {
    // The Dockerfile's first step on the base is `ADD node_modules.tar /`: its (cached) intermediate image's top layer.
    const nodeModulesLayer = async (tag: string) => {
      const history = (await docker('history', '--no-trunc', '--format', '{{.ID}}\t{{.CreatedBy}}', tag))
        .trim()
        .split('\n')
        .map((line) => line.split('\t'))
        .reverse();
      const [step, createdBy] = history[history.findIndex(([id]) => id === built.base.id) + 1] ?? [];
      expect([tag, createdBy]).toEqual([tag, expect.stringMatching(/ADD file:\S+ in \/\s*$/)]);
      const stepLayers = JSON.parse(
        await docker('image', 'inspect', '--format', '{{json .RootFS.Layers}}', step!),
      ) as string[];
      const layers = JSON.parse(
        await docker('image', 'inspect', '--format', '{{json .RootFS.Layers}}', tag),
      ) as string[];
      expect(layers.slice(0, stepLayers.length)).toEqual(stepLayers);
      return stepLayers.at(-1);
    };
    const layers = await Promise.all(SERVICE_APPS.map((app) => nodeModulesLayer(image(app))));
    expect(new Set(layers).size).toBe(1);
  });

  it('hold compiled output only: no sources, specs, benchmarks or source maps', () => {
    for (const file of [CONTEXT_TARS.workspace, CONTEXT_TARS.app('core'), CONTEXT_TARS.app('dashboard')]) {
      const members = execFileSync('tar', ['--list', `--file=${join(built.context.dir, file)}`], {
        encoding: 'utf8',
      })
        .trim()
        .split('\n');
      expect([file, members.filter((m) => /\/src\/|\.spec\.js$|\/bench\/|\.map$|\.ts$/.test(m))]).toEqual([
        file,
        [],
      ]);
    }
    const workspace = execFileSync(
      'tar',
      ['--list', `--file=${join(built.context.dir, CONTEXT_TARS.workspace)}`],
      {
        encoding: 'utf8',
      },
    );
    for (const needed of [
      'app/package.json',
      'app/tools/kube-apiserver/go.mod',
      'app/libs/testing/dist/local-host.js',
      'app/apps/node-agent/dist/main.js',
    ]) {
      expect(workspace).toContain(`${needed}\n`);
    }
  });

  it('are not built again when nothing changed, from byte-identical context tars', async () => {
    const digest = (file: string) =>
      createHash('sha256')
        .update(readFileSync(join(built.context.dir, file)))
        .digest('hex');
    const tars = [CONTEXT_TARS.workspace, ...SERVICE_APPS.map((app) => CONTEXT_TARS.app(app))];
    const before = tars.map(digest);
    const started = Date.now();
    const again = await buildServiceImages({ socketPath: engine.socketPath });
    // Staged anew (workspace.tar and the app tars are always rewritten), with the same bytes.
    expect(tars.map(digest)).toEqual(before);
    expect(again.base.rebuilt).toBe(false);
    expect(again.services.map(({ app, id, rebuilt }) => ({ app, id, rebuilt }))).toEqual(
      built.services.map(({ app, id }) => ({ app, id, rebuilt: false })),
    );
    // Writing the base root filesystem and staging the context; no context is sent to the engine.
    expect(Date.now() - started).toBeLessThan(30_000);
  });
});
