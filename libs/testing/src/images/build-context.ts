import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  constants,
  copyFileSync,
  existsSync,
  linkSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import { executable, pinnedKubeApiserverVersions } from '../binaries.js';
import { cacheRoot, repoRoot } from '../repo.js';
import { ImageBuildError } from './image-build-error.js';

/** The services that get an image (deploy/services), each `node apps/<app>/dist/main.js`: the five and the dashboard. */
export const SERVICE_APPS = [
  'core',
  'cluster-provider',
  'machine-provider',
  'bootstrap-provider',
  'control-plane-provider',
  'dashboard',
] as const;
export type ServiceApp = (typeof SERVICE_APPS)[number];

/**
 * Folders of a workspace, besides its dist/, that its code reads from disk at run time, each copied whole beside its
 * dist/ (an app's into its app tar, a library's into workspace.tar): the dashboard serves its page, modules and style
 * from apps/dashboard/web (web-assets.ts reads them relative to its compiled module, dist/api/ -> ../../web/, so
 * /app/apps/dashboard/web in the image); libs/cluster-templates reads its built-in templates from templates/ (the
 * dashboard creates Clusters from them).
 */
export const RUNTIME_ASSETS: Readonly<Record<string, readonly string[]>> = {
  'apps/dashboard': ['web'],
  'libs/cluster-templates': ['templates'],
};

/** Apps whose compiled output every image holds: the sim in the machine provider runs a node agent per machine. */
const SHARED_APPS = ['node-agent'] as const;

/** The machine-provider image's binary cache: XDG_CACHE_HOME, so cacheRoot() is <this>/capstan. */
export const IMAGE_CACHE_HOME = '/opt/capstan-cache';

/** The Go binaries the sim runs, each in the binary cache's layout <cache>/bin/<name>/<version>/<name>. */
export type SimBinaryName = 'etcd' | 'kube-apiserver' | 'kube-controller-manager' | 'kube-scheduler';

/** The flags of the production install: no dev or optional packages, no install scripts (nothing runs at build). */
const NPM_CI_FLAGS = [
  '--omit=dev',
  '--omit=optional',
  '--ignore-scripts',
  '--no-audit',
  '--no-fund',
  '--prefer-offline',
];

/**
 * Files in node_modules no service reads at run time: type declarations, source maps (the services run without
 * --enable-source-maps) and markdown documentation. They are half of the install (about 70 of 142 MB).
 */
const UNUSED_IN_NODE_MODULES = /(\.d\.[mc]?ts|\.[mc]?[jt]s\.map|\.md|\.markdown)$/i;
/** Licence texts stay, whatever their extension. */
const LICENCE = /^(licen[cs]e|notice|copying|authors)/i;

/** Bump when what is done to node_modules after `npm ci` or how its tar is written changes: the cached tar is then not reused. */
const NODE_MODULES_RECIPE = 'prune-1 app-tar-2';

/**
 * Every part of an image arrives as a tar the Dockerfile ADDs, written with these flags: members sorted, mtime 0, owner
 * root, modes 0755 or 0644 (whatever the checkout's umask), hard links stored as files. The same workspace then gives
 * byte-identical tars and, unpacked by ADD, the same layer digests on any engine; COPY would stamp /app with the build
 * time. And the context is a handful of files: the classic builder unpacks it for every build, and node_modules' 7,500
 * files alone took up to 7 s of each build here.
 */
const TAR_FLAGS = [
  '--format=gnu',
  '--sort=name',
  '--mtime=@0',
  '--owner=0',
  '--group=0',
  '--numeric-owner',
  '--mode=u=rwX,go=rX',
  '--hard-dereference',
];

/** The context's files, as the Dockerfile names them. */
export const CONTEXT_TARS = {
  nodeModules: 'node_modules.tar',
  workspace: 'workspace.tar',
  app: (app: ServiceApp) => `apps/${app}.tar`,
  simBinaries: (name: SimBinaryName) => `go-cache/${name}.tar`,
} as const;
/** Beside the tars (sent, never unpacked): what node_modules.tar and each go-cache tar were made from. */
const NODE_MODULES_KEY = 'node_modules.key';
const GO_BINARY_SOURCES = 'go-cache.sources.json';

export interface StagedGoBinary {
  name: SimBinaryName;
  version: string;
  /** Where the machine-provider image holds it. */
  imagePath: string;
}

export interface BuildContextOptions {
  /** The context folder (default <repo>/.capstan/image-context, git-ignored); `<dir>.work` holds the staging trees. */
  dir?: string;
  /** Stage the sim's Go binaries for the machine-provider image (default true). */
  goBinaries?: boolean;
  log?: (line: string) => void;
}

export interface BuildContext {
  dir: string;
  /** False when node_modules.tar came from an earlier staging with the same lock file (npm did not run). */
  nodeModulesInstalled: boolean;
  goBinaries: StagedGoBinary[];
}

/** deploy/'s kustomization and manifests (YAML), relative to the root; not the image build files under deploy/images. */
function deployManifests(root: string, dir = 'deploy'): string[] {
  return readdirSync(join(root, dir), { withFileTypes: true }).flatMap((entry) => {
    const path = `${dir}/${entry.name}`;
    if (entry.isDirectory()) return path === 'deploy/images' ? [] : deployManifests(root, path);
    return entry.name.endsWith('.yaml') ? [path] : [];
  });
}

/**
 * Stages the services' build context (the root Dockerfile's), one tar per layer, each unpacking under /app:
 * - node_modules.tar: the production node_modules (`npm ci --omit=dev`), types, maps and docs pruned;
 * - workspace.tar: package.json, tools/<module>/go.mod (repoRoot() and the pinned versions are read from them), each
 *   library's package.json and dist/ (and the folders RUNTIME_ASSETS names: the cluster templates), apps/node-agent,
 *   and deploy/'s manifests (docker-compose.yml's management cluster installs the CRDs from them);
 * - apps/<app>.tar: the service's package.json and dist/, and the folders RUNTIME_ASSETS names (the dashboard's web/);
 * - go-cache/<name>.tar: for the machine provider, the sim's Go binaries in the binary cache's layout.
 * dist/ means the .js of current sources, without specs, benchmarks, source maps or src/. `node scripts/build.mjs` must
 * have run: a dist/ file missing or older than its source is an error, not a stale image.
 */
export function stageBuildContext(options: BuildContextOptions = {}): BuildContext {
  const log = options.log ?? (() => undefined);
  const root = repoRoot();
  const dir = options.dir ?? join(root, '.capstan', 'image-context');
  const work = `${dir}.work`;
  mkdirSync(join(dir, 'apps'), { recursive: true });

  const workspaces = workspacePackages(root);
  const libs = workspaces.filter((w) => w.startsWith('libs/'));
  const apps = [...SERVICE_APPS, ...SHARED_APPS].map((app) => `apps/${app}`);
  const outputs = [...libs, ...apps].flatMap((workspace) => compiledOutputs(root, workspace));

  // The /app tree, staged anew (a few MB): nothing stale survives a rename or removal.
  const tree = join(work, 'tree');
  rmSync(tree, { recursive: true, force: true });
  const assets = [...libs, ...apps].flatMap((workspace) =>
    (RUNTIME_ASSETS[workspace] ?? []).flatMap((folder) => filesUnder(root, `${workspace}/${folder}`)),
  );
  const files = [
    'package.json',
    ...[...libs, ...apps].map((w) => `${w}/package.json`),
    ...outputs,
    ...assets,
  ];
  for (const module of readdirSync(join(root, 'tools'))) {
    if (existsSync(join(root, 'tools', module, 'go.mod'))) files.push(`tools/${module}/go.mod`);
  }
  files.push(...deployManifests(root));
  for (const file of files) copy(root, join(tree, 'app'), file);
  tar(join(dir, CONTEXT_TARS.workspace), tree, [
    'app/package.json',
    'app/deploy',
    'app/tools',
    'app/libs',
    ...SHARED_APPS.map((app) => `app/apps/${app}`),
  ]);
  for (const app of SERVICE_APPS) tar(join(dir, CONTEXT_TARS.app(app)), tree, [`app/apps/${app}`]);
  rmSync(tree, { recursive: true, force: true });
  copyFileSync(join(root, 'Dockerfile'), join(dir, 'Dockerfile'));

  const nodeModulesInstalled = stageNodeModules(root, dir, work, workspaces, log);
  const goBinaries = options.goBinaries === false ? [] : stageGoBinaries(root, dir, work, log);
  const expected = new Set([
    'Dockerfile',
    'apps',
    CONTEXT_TARS.nodeModules,
    NODE_MODULES_KEY,
    CONTEXT_TARS.workspace,
  ]);
  if (goBinaries.length > 0) ['go-cache', GO_BINARY_SOURCES].forEach((name) => expected.add(name));
  // Whatever else is there (an earlier layout, Go binaries not wanted now) is not sent.
  removeOthers(dir, [...expected]);
  removeOthers(
    join(dir, 'apps'),
    SERVICE_APPS.map((app) => `${app}.tar`),
  );
  log(
    `build context staged in ${dir} (${outputs.length} compiled files, ` +
      `node_modules ${nodeModulesInstalled ? 'installed' : 'reused'}, ${goBinaries.length} Go binaries)`,
  );
  return { dir, nodeModulesInstalled, goBinaries };
}

/**
 * A digest of some of the context's files, to tell whether an image built from them is still current without sending
 * the context to the engine again. node_modules.tar is digested by its install key (the lock file, the package.json
 * files), go-cache by each binary's source path, size and mtime in the binary cache; other files by their content.
 */
export function contextDigest(context: BuildContext, files: readonly string[]): string {
  const hash = createHash('sha256');
  for (const file of [...files].sort()) {
    hash.update(`\0${file}\0`);
    if (file === CONTEXT_TARS.nodeModules) hash.update(readFileSync(join(context.dir, NODE_MODULES_KEY)));
    else if (file === 'go-cache') hash.update(readFileSync(join(context.dir, GO_BINARY_SOURCES)));
    else hash.update(readFileSync(join(context.dir, file)));
  }
  return hash.digest('hex');
}

/** Every file under `folder` (relative to the root), as paths relative to the root; an error when it does not exist. */
function filesUnder(root: string, folder: string): string[] {
  if (!existsSync(join(root, folder)))
    throw new ImageBuildError(`${folder} is missing: its service reads it at run time`, { folder });
  return readdirSync(join(root, folder), { withFileTypes: true }).flatMap((entry) => {
    const path = `${folder}/${entry.name}`;
    if (entry.isDirectory()) return filesUnder(root, path);
    return entry.isFile() ? [path] : [];
  });
}

/** The workspaces (root package.json `workspaces`: libs/* and apps/*) as relative folders holding a package.json. */
function workspacePackages(root: string): string[] {
  return ['libs', 'apps']
    .flatMap((kind) => readdirSync(join(root, kind)).map((name) => `${kind}/${name}`))
    .filter((workspace) => existsSync(join(root, workspace, 'package.json')))
    .sort();
}

/**
 * The dist/ files of a workspace that its current sources produce (scripts/build.mjs: src/x.ts -> dist/x.js), less
 * benchmarks; each must exist and be at least as new as its source. Outputs of deleted sources are left out.
 */
function compiledOutputs(root: string, workspace: string): string[] {
  const outputs: string[] = [];
  const problems: string[] = [];
  const walk = (folder: string): void => {
    for (const entry of readdirSync(join(root, workspace, 'src', folder), { withFileTypes: true })) {
      const path = folder ? `${folder}/${entry.name}` : entry.name;
      if (entry.isDirectory()) {
        if (entry.name !== 'bench') walk(path);
        continue;
      }
      if (!entry.name.endsWith('.ts') || entry.name.endsWith('.spec.ts') || entry.name.endsWith('.d.ts'))
        continue;
      const output = `${workspace}/dist/${path.replace(/\.ts$/, '.js')}`;
      const built = mtime(join(root, output));
      if (built === undefined) problems.push(`${output} is missing`);
      else if (built < mtime(join(root, workspace, 'src', path))!)
        problems.push(`${output} is older than its source`);
      else outputs.push(output);
    }
  };
  if (existsSync(join(root, workspace, 'src'))) walk('');
  if (problems.length > 0) {
    throw new ImageBuildError(
      `${workspace} is not compiled: ${problems.slice(0, 3).join('; ')}` +
        (problems.length > 3 ? ` (and ${problems.length - 3} more)` : '') +
        '. Run `node scripts/build.mjs` (npm run build) first.',
      { workspace, problems },
    );
  }
  return outputs;
}

/**
 * node_modules as `npm ci` installs it for production, installed in <work>/npm/app from copies of the lock file and
 * every package.json, and written as node_modules.tar. The workspaces are relative symlinks,
 * node_modules/@capstan/<name> -> ../../libs/<name>, which resolve in the image's /app as they do here. Installed
 * again only when the lock file or a package.json changed.
 */
function stageNodeModules(
  root: string,
  dir: string,
  work: string,
  workspaces: readonly string[],
  log: (line: string) => void,
): boolean {
  const manifests = ['package-lock.json', 'package.json', ...workspaces.map((w) => `${w}/package.json`)];
  const hash = createHash('sha256').update(NODE_MODULES_RECIPE).update(NPM_CI_FLAGS.join(' '));
  for (const file of manifests) hash.update(`\0${file}\0`).update(readFileSync(join(root, file)));
  const key = hash.digest('hex');
  const keyFile = join(dir, NODE_MODULES_KEY);
  const output = join(dir, CONTEXT_TARS.nodeModules);
  if (existsSync(output) && existsSync(keyFile) && readFileSync(keyFile, 'utf8') === key) return false;

  log('installing production node_modules (npm ci --omit=dev)');
  rmSync(keyFile, { force: true });
  const npm = join(work, 'npm');
  rmSync(npm, { recursive: true, force: true });
  for (const file of manifests) copy(root, join(npm, 'app'), file);
  try {
    execFileSync('npm', ['ci', ...NPM_CI_FLAGS, '--loglevel=error'], {
      cwd: join(npm, 'app'),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
  } catch (error) {
    const stderr = `${(error as { stderr?: Buffer }).stderr ?? ''}`;
    throw new ImageBuildError(
      `npm ci for the images' node_modules failed: ${stderr || (error as Error).message}`,
      {
        dir: join(npm, 'app'),
      },
    );
  }
  pruneNodeModules(join(npm, 'app', 'node_modules'));
  tar(output, npm, ['app/node_modules']);
  rmSync(npm, { recursive: true, force: true });
  writeFileSync(keyFile, key);
  return true;
}

function pruneNodeModules(folder: string): void {
  for (const entry of readdirSync(folder, { withFileTypes: true })) {
    const path = join(folder, entry.name);
    if (entry.isDirectory()) pruneNodeModules(path);
    else if (entry.isFile() && UNUSED_IN_NODE_MODULES.test(entry.name) && !LICENCE.test(entry.name))
      rmSync(path);
  }
}

/**
 * The sim's binaries from the binary cache (~/.cache/capstan/bin), one tar per command unpacking under
 * IMAGE_CACHE_HOME: etcd, the main kube-apiserver, kube-controller-manager and kube-scheduler are required
 * (`npm run setup` builds them); other pinned kube-apiserver minors go in when they have been built. A tar is
 * written again only when one of its binaries changed in the cache.
 */
function stageGoBinaries(
  root: string,
  dir: string,
  work: string,
  log: (line: string) => void,
): StagedGoBinary[] {
  const pinned = pinnedKubeApiserverVersions();
  const main = pinned[0]?.version;
  if (!main) throw new ImageBuildError('tools/ pins no kube-apiserver version', { root });
  const wanted: { name: SimBinaryName; version: string; required: boolean }[] = [
    { name: 'etcd', version: etcdVersion(root), required: true },
    ...pinned.map(({ version }) => ({
      name: 'kube-apiserver' as const,
      version,
      required: version === main,
    })),
    { name: 'kube-controller-manager', version: main, required: true },
    { name: 'kube-scheduler', version: main, required: true },
  ];
  const cache = join(cacheRoot(), 'bin');
  const source = (b: { name: SimBinaryName; version: string }) => join(cache, b.name, b.version, b.name);
  const missing = wanted.filter((b) => b.required && !executable(source(b)));
  if (missing.length > 0) {
    throw new ImageBuildError(
      `the machine-provider image needs ${missing.map((b) => `${b.name} ${b.version}`).join(', ')} in ${cache}; ` +
        'run `npm run setup` (it builds them from the pinned Go modules)',
      { missing: missing.map((b) => `${b.name}/${b.version}`) },
    );
  }
  for (const b of wanted.filter((b) => !executable(source(b)))) {
    log(`${b.name} ${b.version} is not built: the machine-provider image will not hold it`);
  }
  const staged = wanted.filter((b) => executable(source(b)));

  const stampsFile = join(dir, GO_BINARY_SOURCES);
  const previous = readStamps(stampsFile);
  const stamps: Record<string, string> = {};
  mkdirSync(join(dir, 'go-cache'), { recursive: true });
  for (const name of [...new Set(staged.map((b) => b.name))]) {
    const binaries = staged.filter((b) => b.name === name);
    stamps[name] = binaries
      .map((b) => {
        const stat = statSync(source(b));
        return `${source(b)}:${stat.size}:${stat.mtimeMs}`;
      })
      .join(' ');
    const output = join(dir, CONTEXT_TARS.simBinaries(name));
    if (previous[name] === stamps[name] && existsSync(output)) continue;
    // A tree of links to the cached binaries, so the tar holds every folder of the path (owned and dated as the rest).
    const tree = join(work, 'go', name);
    rmSync(tree, { recursive: true, force: true });
    for (const b of binaries) {
      const target = join(tree, IMAGE_CACHE_HOME, 'capstan', 'bin', b.name, b.version, b.name);
      mkdirSync(dirname(target), { recursive: true });
      try {
        linkSync(source(b), target);
      } catch {
        copyFileSync(source(b), target, constants.COPYFILE_FICLONE);
      }
    }
    tar(output, tree, [`${IMAGE_CACHE_HOME.slice(1)}/capstan/bin/${name}`]);
    rmSync(tree, { recursive: true, force: true });
  }
  removeOthers(
    join(dir, 'go-cache'),
    Object.keys(stamps).map((name) => `${name}.tar`),
  );
  writeFileSync(stampsFile, JSON.stringify(stamps, null, 2));
  return staged.map((b) => ({
    name: b.name,
    version: b.version,
    imagePath: `${IMAGE_CACHE_HOME}/capstan/bin/${b.name}/${b.version}/${b.name}`,
  }));
}

/**
 * Writes `output` from the `trees` under `from`, each with everything under it, preceded by the entries of the folders
 * above them (without their other contents): /app, /opt and the like then unpack with mtime 0 too, not the build time.
 */
function tar(output: string, from: string, trees: readonly string[]): void {
  const folders = new Set<string>();
  for (const path of trees) {
    const parts = path.split('/');
    for (let i = 1; i < parts.length; i++) folders.add(parts.slice(0, i).join('/'));
  }
  mkdirSync(dirname(output), { recursive: true });
  const partial = `${output}.partial`;
  const args = ['--create', `--file=${partial}`, ...TAR_FLAGS, `--directory=${from}`];
  try {
    execFileSync('tar', [...args, '--no-recursion', ...[...folders].sort(), '--recursion', ...trees], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
  } catch (error) {
    throw new ImageBuildError(`writing ${output} failed: ${(error as { stderr?: Buffer }).stderr ?? ''}`, {
      output,
    });
  }
  renameSync(partial, output);
}

/** Removes everything in `folder` but `keep` (names). */
function removeOthers(folder: string, keep: readonly string[]): void {
  for (const name of readdirSync(folder)) {
    if (!keep.includes(name)) rmSync(join(folder, name), { recursive: true, force: true });
  }
}

/** The etcd release tools/etcd/go.mod pins (as binaries.ts reads it). */
function etcdVersion(root: string): string {
  const goMod = readFileSync(join(root, 'tools', 'etcd', 'go.mod'), 'utf8');
  const version = /go\.etcd\.io\/etcd\/server\/v3 (v\S+)/.exec(goMod)?.[1];
  if (!version) throw new ImageBuildError('tools/etcd/go.mod names no etcd version', { root });
  return version;
}

function readStamps(file: string): Record<string, string> {
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as Record<string, string>;
  } catch {
    return {};
  }
}

function copy(from: string, to: string, file: string): void {
  mkdirSync(dirname(join(to, file)), { recursive: true });
  copyFileSync(join(from, file), join(to, file));
}

function mtime(path: string): number | undefined {
  try {
    return statSync(path).mtimeMs;
  } catch {
    return undefined;
  }
}
