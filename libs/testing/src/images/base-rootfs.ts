import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  chmodSync,
  closeSync,
  copyFileSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readlinkSync,
  readSync,
  realpathSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { basename, dirname, join, posix } from 'node:path';
import { executable, onPath } from '../binaries.js';
import { cacheRoot, repoRoot } from '../repo.js';
import { ImageBuildError } from './image-build-error.js';

/**
 * The Debian packages of the base image: the shared libraries `node` links against (checked against `ldd` on every
 * build, so a Node that needs another library fails here, not in a container) and dash for /bin/sh, which the
 * services' entrypoint runs.
 */
export const BASE_PACKAGES = ['libc6', 'libgcc-s1', 'libstdc++6', 'dash'] as const;

/** The service images' user and group (deploy/services: runAsUser/runAsGroup 65532, as in distroless images). */
export const NONROOT_ID = 65532;

/** Every file in the tar gets this mtime, so the same inputs give the same bytes. */
const EPOCH = 0;

export interface DebianPackage {
  name: string;
  version: string;
  architecture: string;
}

export interface BaseRootfs {
  /** The root filesystem as a tar, for `ADD rootfs.tar /` (deploy/images/base.Dockerfile). */
  tarPath: string;
  /** sha256 of the tar (hex): equal inputs give an equal hash. */
  sha256: string;
  /** The Node.js in /usr/local/bin/node, e.g. v24.21.0. */
  nodeVersion: string;
  /** Whether its symbol table was stripped (`strip` was on PATH). */
  nodeStripped: boolean;
  packages: DebianPackage[];
  /** The image's LABELs: the node version, the package versions, the tar's hash. */
  labels: Record<string, string>;
}

export interface BaseRootfsOptions {
  /** Where rootfs.tar and rootfs.json go (default ~/.cache/capstan/images/base). */
  outDir?: string;
  /** Downloaded .deb files, kept across builds (default ~/.cache/capstan/images/debs). */
  debCacheDir?: string;
  /** The node binary to ship (default: the project's Node 24, see projectNodeBinary). */
  nodeBinary?: string;
  log?: (line: string) => void;
}

/**
 * Builds the base image's root filesystem: the host's exact versions of BASE_PACKAGES (downloaded with apt-get,
 * unpacked with dpkg-deb, docs, man pages, locales and iconv modules left out), the project's Node 24 as
 * /usr/local/bin/node, /bin/sh, root and `nonroot` (65532) users, a sticky /tmp; written as a reproducible tar.
 */
export function buildBaseRootfs(options: BaseRootfsOptions = {}): BaseRootfs {
  const log = options.log ?? (() => undefined);
  const outDir = options.outDir ?? join(cacheRoot(), 'images', 'base');
  const node = options.nodeBinary
    ? { path: options.nodeBinary, version: nodeVersion(options.nodeBinary) }
    : projectNodeBinary();
  const packages = hostPackages(BASE_PACKAGES);
  const debs = downloadDebs(packages, options.debCacheDir ?? join(cacheRoot(), 'images', 'debs'), log);

  mkdirSync(outDir, { recursive: true });
  const work = mkdtempSync(join(outDir, 'staging-'));
  try {
    const root = join(work, 'rootfs');
    directory(root, '', 0o755);
    for (const deb of debs) run('dpkg-deb', ['-x', deb.path, root], `unpacking ${basename(deb.path)}`);
    dropUnused(root);
    const nodeStripped = installNode(node.path, root);
    checkLinkage(node.path, root);
    writeSystemFiles(root, debs);

    // nonroot's home is added in a second pass, owned by 65532 (the first pass makes every file root's).
    const home = join(work, 'nonroot-home');
    directory(home, 'home/nonroot', 0o755);

    const partial = join(outDir, `rootfs.tar.${process.pid}.partial`);
    const tar = ['--format=gnu', `--mtime=@${EPOCH}`, '--numeric-owner', `--file=${partial}`];
    run(
      'tar',
      ['--create', ...tar, '--sort=name', '--owner=0', '--group=0', `--directory=${root}`, '.'],
      'writing the root filesystem tar',
    );
    run(
      'tar',
      [
        '--append',
        ...tar,
        `--owner=${NONROOT_ID}`,
        `--group=${NONROOT_ID}`,
        `--directory=${home}`,
        './home/nonroot',
      ],
      "adding nonroot's home",
    );
    const tarPath = join(outDir, 'rootfs.tar');
    renameSync(partial, tarPath);

    const sha256 = sha256File(tarPath);
    const labels = {
      'dev.capstan.base.node-version': node.version,
      'dev.capstan.base.node-stripped': String(nodeStripped),
      'dev.capstan.base.debian-packages': packages.map((p) => `${p.name}=${p.version}`).join(' '),
      'dev.capstan.base.rootfs-sha256': sha256,
    };
    const result: BaseRootfs = { tarPath, sha256, nodeVersion: node.version, nodeStripped, packages, labels };
    writeFileSync(join(outDir, 'rootfs.json'), `${JSON.stringify(result, null, 2)}\n`);
    log(
      `base root filesystem: node ${node.version}, ${result.packages.map((p) => `${p.name} ${p.version}`).join(', ')} (sha256 ${sha256.slice(0, 12)})`,
    );
    return result;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/**
 * The Node 24 the project runs: the one scripts/node24.sh installs into .tools/, else `node` on PATH when it is v24.
 */
export function projectNodeBinary(): { path: string; version: string } {
  const candidates = [
    join(repoRoot(), '.tools', 'node24', 'node_modules', 'node', 'bin', 'node'),
    onPath('node'),
  ];
  for (const candidate of candidates) {
    if (!candidate || !executable(candidate)) continue;
    const version = nodeVersion(candidate);
    if (version.startsWith('v24.')) return { path: realpathSync(candidate), version };
  }
  throw new ImageBuildError(
    'no Node 24 binary to put in the base image: neither .tools/node24 (scripts/node24.sh installs it) nor `node` on PATH is v24',
    { candidates },
  );
}

function nodeVersion(path: string): string {
  const result = spawnSync(path, ['--version'], { encoding: 'utf8' });
  return `${result.stdout}`.trim();
}

/** The versions of `names` installed on this host: the base gets exactly what the host runs node with. */
function hostPackages(names: readonly string[]): DebianPackage[] {
  if (!onPath('dpkg-query') || !onPath('apt-get')) {
    throw new ImageBuildError(
      'the base image is built from Debian packages: dpkg-query and apt-get are needed (a Debian or Ubuntu host)',
    );
  }
  const architecture = run('dpkg', ['--print-architecture'], 'reading the host architecture').trim();
  return names.map((name) => {
    const version = run(
      'dpkg-query',
      ['-W', '-f=${Version}', `${name}:${architecture}`],
      `reading the installed version of ${name}`,
    ).trim();
    if (!version) throw new ImageBuildError(`${name} is not installed on this host`, { name });
    return { name, version, architecture };
  });
}

/** The .deb of each package, from the cache or downloaded once with apt-get (the host's apt sources). */
function downloadDebs(
  packages: readonly DebianPackage[],
  cacheDir: string,
  log: (line: string) => void,
): (DebianPackage & { path: string })[] {
  mkdirSync(cacheDir, { recursive: true });
  return packages.map((pkg) => {
    const path = join(cacheDir, `${pkg.name}_${pkg.version.replace(':', '%3a')}_${pkg.architecture}.deb`);
    if (existsSync(path)) return { ...pkg, path };
    log(`downloading ${pkg.name} ${pkg.version} (apt-get download, once)`);
    const tmp = mkdtempSync(join(cacheDir, 'download-'));
    try {
      const spec = `${pkg.name}:${pkg.architecture}=${pkg.version}`;
      const result = spawnSync('apt-get', ['download', spec], { cwd: tmp, encoding: 'utf8' });
      const deb = readdirSync(tmp).find((name) => name.endsWith('.deb'));
      if (result.status !== 0 || !deb) {
        throw new ImageBuildError(
          `apt-get download ${spec} failed (run apt-get update if the package lists are old):\n${result.stderr}`,
          { package: pkg.name, version: pkg.version },
        );
      }
      const fields = run('dpkg-deb', ['--field', join(tmp, deb), 'Package', 'Version'], `reading ${deb}`);
      if (!fields.includes(`Package: ${pkg.name}\n`) || !fields.includes(`Version: ${pkg.version}\n`)) {
        throw new ImageBuildError(`apt-get download ${spec} gave another package:\n${fields}`, {
          package: pkg.name,
        });
      }
      renameSync(join(tmp, deb), path);
      return { ...pkg, path };
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
  });
}

/**
 * Leaves out what nothing in the image reads: usr/share (documentation, man pages, locales, lintian overrides, gcc's
 * pretty printers) and glibc's iconv modules (Node converts text with its built-in ICU).
 */
function dropUnused(root: string): void {
  rmSync(join(root, 'usr', 'share'), { recursive: true, force: true });
  const usrLib = join(root, 'usr', 'lib');
  for (const entry of existsSync(usrLib) ? readdirSync(usrLib) : []) {
    rmSync(join(usrLib, entry, 'gconv'), { recursive: true, force: true });
  }
}

/**
 * Copies node to /usr/local/bin. Its symbol table (about 18 MB of 127) is stripped when `strip` is there: backtraces
 * and native addons use the dynamic symbols, which stay. Same input, same output (strip is deterministic).
 */
function installNode(nodePath: string, root: string): boolean {
  directory(root, 'usr/local/bin', 0o755);
  const target = join(root, 'usr', 'local', 'bin', 'node');
  const strip = onPath('strip');
  if (strip) run(strip, ['--strip-unneeded', '-o', target, nodePath], 'stripping node');
  else copyFileSync(nodePath, target);
  chmodSync(target, 0o755);
  return strip !== undefined;
}

/**
 * Every shared library `ldd` resolves for node on the host, and its ELF interpreter, must be in the root filesystem:
 * otherwise the image would fail at exec with a bare "no such file or directory".
 */
function checkLinkage(nodePath: string, root: string): void {
  const missing: string[] = [];
  for (const line of run('ldd', [nodePath], 'listing the libraries node needs').split('\n')) {
    const library = /^\s*(\S+) => (\S+)/.exec(line);
    if (library?.[2] === 'not') missing.push(`${library[1]} (not found on the host either)`);
    else if (library?.[1] && library[2]) {
      const multiarch = basename(dirname(library[2]));
      const inRoot = [`lib/${multiarch}/${library[1]}`, `usr/lib/${multiarch}/${library[1]}`];
      if (!inRoot.some((path) => existsInRoot(root, path))) missing.push(library[1]);
      continue;
    }
    const interpreter = /^\s*(\/\S+) \(0x/.exec(line)?.[1];
    if (interpreter && !existsInRoot(root, interpreter)) missing.push(interpreter);
  }
  if (missing.length > 0) {
    throw new ImageBuildError(
      `node needs ${missing.join(', ')}, which none of the base packages (${BASE_PACKAGES.join(', ')}) provides`,
      { missing },
    );
  }
}

/** /bin/sh, the users, name service configuration, /tmp, /root, /home and the packages' status for scanners. */
function writeSystemFiles(root: string, debs: readonly (DebianPackage & { path: string })[]): void {
  if (!existsInRoot(root, 'bin/sh')) symlinkSync('dash', join(root, 'bin', 'sh'));
  file(
    root,
    'etc/passwd',
    `root:x:0:0:root:/root:/bin/sh\nnonroot:x:${NONROOT_ID}:${NONROOT_ID}:nonroot:/home/nonroot:/usr/sbin/nologin\n`,
  );
  file(root, 'etc/group', `root:x:0:\nnonroot:x:${NONROOT_ID}:\n`);
  // getaddrinfo reads /etc/hosts before DNS only when told to (glibc's default without this file is DNS first).
  file(root, 'etc/nsswitch.conf', 'passwd: files\ngroup: files\nshadow: files\nhosts: files dns\n');
  directory(root, 'tmp', 0o1777);
  directory(root, 'root', 0o700);
  directory(root, 'home', 0o755);
  // One control paragraph per package where distroless images keep them, so image scanners see the versions.
  directory(root, 'var/lib/dpkg/status.d', 0o755);
  for (const deb of debs) {
    const control = run('dpkg-deb', ['--field', deb.path], `reading ${basename(deb.path)}`);
    file(root, `var/lib/dpkg/status.d/${deb.name}`, control.endsWith('\n') ? control : `${control}\n`);
  }
}

/** Creates `relative` under `root` and any missing parent with an explicit mode (not the umask's). */
function directory(root: string, relative: string, mode: number): void {
  if (!existsSync(root)) mkdirSync(root, { recursive: true });
  let path = root;
  for (const part of relative.split('/').filter(Boolean)) {
    path = join(path, part);
    if (!existsSync(path)) {
      mkdirSync(path);
      chmodSync(path, 0o755);
    }
  }
  chmodSync(path, mode);
}

function file(root: string, relative: string, content: string): void {
  directory(root, posix.dirname(relative), 0o755);
  const path = join(root, relative);
  writeFileSync(path, content);
  chmodSync(path, 0o644);
}

/** Whether `path` exists inside `root`, following symlinks as the image would (absolute targets stay in `root`). */
function existsInRoot(root: string, path: string, hops = 0): boolean {
  const parts = path.split('/').filter(Boolean);
  let current = '/';
  for (let i = 0; i < parts.length; i++) {
    const next = posix.join(current, parts[i]!);
    let link: string | undefined;
    try {
      if (lstatSync(join(root, next)).isSymbolicLink()) link = readlinkSync(join(root, next));
    } catch {
      return false;
    }
    if (link !== undefined) {
      if (hops > 16) return false;
      const target = link.startsWith('/') ? link : posix.join(current, link);
      return existsInRoot(root, posix.join(target, ...parts.slice(i + 1)), hops + 1);
    }
    current = next;
  }
  return true;
}

/** sha256 of a file, read in chunks (the tar is over 100 MB). */
function sha256File(path: string): string {
  const hash = createHash('sha256');
  const buffer = Buffer.alloc(1 << 20);
  const fd = openSync(path, 'r');
  try {
    for (let read = readSync(fd, buffer); read > 0; read = readSync(fd, buffer))
      hash.update(buffer.subarray(0, read));
  } finally {
    closeSync(fd);
  }
  return hash.digest('hex');
}

function run(command: string, args: string[], what: string): string {
  try {
    return execFileSync(command, args, {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
      maxBuffer: 64 << 20,
    });
  } catch (error) {
    const stderr = (error as { stderr?: string }).stderr ?? '';
    throw new ImageBuildError(
      `${what} failed (${command} ${args.join(' ')}): ${stderr || (error as Error).message}`,
      {
        command,
        args,
      },
    );
  }
}
