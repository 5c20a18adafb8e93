import { chmodSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { applyFile, FileStepError } from './files.js';
import { readBeneath } from './beneath-root.js';
import { HostRoot } from './host-root.js';

// Issue 32, finding 6: a tenant can put symbolic links into its machine's root (an instruction runs `ln -s`); on the
// sim the root is a directory of the management host, so a writer following them changes host files.

describe('plan files never leave the root through a symbolic link', () => {
  let dir: string;
  let machine: string;
  let root: HostRoot;
  const hostFile = () => join(dir, 'host/passwd');
  const base64 = (text: string) => Buffer.from(text).toString('base64');

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'beneath-root-'));
    machine = join(dir, 'machine');
    mkdirSync(join(machine, 'etc'), { recursive: true });
    mkdirSync(join(dir, 'host'));
    writeFileSync(hostFile(), 'host content', { mode: 0o644 });
    root = new HostRoot(machine);
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('refuses to write through a symlinked directory and leaves the host file alone', async () => {
    symlinkSync(join(dir, 'host'), join(machine, 'etc/linked'));
    const step = applyFile(root, { path: '/etc/linked/passwd', content: base64('owned'), permissions: '0777' });
    await expect(step).rejects.toThrow(new FileStepError('/etc/linked/passwd', 'ELOOP'));
    expect(readFileSync(hostFile(), 'utf8')).toBe('host content');
    expect(statSync(hostFile()).mode & 0o777).toBe(0o644);
  });

  it('replaces a symlink at the target itself instead of writing through it', async () => {
    symlinkSync(hostFile(), join(machine, 'etc/motd'));
    await applyFile(root, { path: '/etc/motd', content: base64('machine motd'), permissions: '0600' });
    expect(readFileSync(hostFile(), 'utf8')).toBe('host content');
    expect(lstatSync(join(machine, 'etc/motd')).isSymbolicLink()).toBe(false);
    expect(readFileSync(join(machine, 'etc/motd'), 'utf8')).toBe('machine motd');
    expect(statSync(join(machine, 'etc/motd')).mode & 0o777).toBe(0o600);
  });

  it('does not write through a link planted at the old predictable temporary name', async () => {
    symlinkSync(hostFile(), join(machine, `etc/motd.capstan-tmp-${process.pid}`));
    await applyFile(root, { path: '/etc/motd', content: base64('machine motd') });
    expect(readFileSync(hostFile(), 'utf8')).toBe('host content');
    expect(readFileSync(join(machine, 'etc/motd'), 'utf8')).toBe('machine motd');
  });

  it('changes the mode of a directory step only inside the root', async () => {
    symlinkSync(join(dir, 'host'), join(machine, 'etc/conf.d'));
    chmodSync(join(dir, 'host'), 0o755);
    await expect(applyFile(root, { path: '/etc/conf.d', directory: true, permissions: '0777' })).rejects.toThrow('ELOOP');
    expect(statSync(join(dir, 'host')).mode & 0o777).toBe(0o755);
    await applyFile(root, { path: '/etc/own.d', directory: true, permissions: '0700' });
    expect(statSync(join(machine, 'etc/own.d')).mode & 0o777).toBe(0o700);
  });

  it('deletes a link, never what it points at, and refuses a delete through a linked directory', async () => {
    symlinkSync(hostFile(), join(machine, 'etc/passwd'));
    await applyFile(root, { path: '/etc/passwd', action: 'delete' });
    expect(existsSync(join(machine, 'etc/passwd'))).toBe(false);
    expect(readFileSync(hostFile(), 'utf8')).toBe('host content');
    symlinkSync(join(dir, 'host'), join(machine, 'etc/linked'));
    await expect(applyFile(root, { path: '/etc/linked/passwd', action: 'delete' })).rejects.toThrow('ELOOP');
    expect(existsSync(hostFile())).toBe(true);
  });

  it('reads neither through a link nor more than the limit', () => {
    symlinkSync(hostFile(), join(machine, 'etc/token'));
    expect(() => readBeneath(root, '/etc/token', 1024)).toThrow('ELOOP');
    writeFileSync(join(machine, 'etc/big'), Buffer.alloc(2048));
    expect(() => readBeneath(root, '/etc/big', 1024)).toThrow('EFBIG');
    expect(readBeneath(root, '/etc/big', 4096)).toHaveLength(2048);
  });
});
