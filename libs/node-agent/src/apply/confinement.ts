import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** What root on a machine may do to its own files and processes, and nothing about mounts, modules or the kernel. */
const MACHINE_ROOT_CAPABILITIES = [
  'chown',
  'dac_override',
  'fowner',
  'fsetid',
  'kill',
  'setgid',
  'setuid',
  'net_bind_service',
]
  .map((cap) => `+${cap}`)
  .join(',');

/**
 * Runs inside a new mount and PID namespace (made by `unshare`), as the namespace's first process: makes the
 * machine's directory the root of the namespace and runs the instruction there. The host's program directories
 * are bind-mounted read-only (a machine needs `sh`, `sed`, `mkdir`; it must not change them), `/proc` shows only
 * the namespace's processes, with the kernel's knobs in it read-only (`/proc/sys`, `/proc/sysrq-trigger`, `irq`,
 * `bus`, `fs`: they are the host kernel's, and root may write them without any capability, as container runtimes
 * know), `/dev` holds four harmless devices, and after `pivot_root` the host's root is
 * unmounted, so no path, symlink or `..` inside leads out. The instruction then runs with the capabilities a
 * machine's root needs for its own files and processes, and without CAP_SYS_ADMIN (no mount, no unmount of the
 * read-only binds), CAP_SYS_CHROOT (no chroot escape), CAP_SYS_PTRACE or CAP_SYS_MODULE, and with no_new_privs.
 *
 * Mounts made here live in the namespace and die with it: a symlink the tenant planted where a mount goes redirects
 * at most a mount of this namespace, never one of the host.
 *
 * Arguments: the machine's host directory, the working directory (a machine path), then the command and its
 * arguments. When the instruction (PID 1 of the namespace) exits, the kernel kills what it left behind.
 */
export const CONFINE_SCRIPT = `set -e
root=$1; cwd=$2; shift 2
mount --bind "$root" "$root"
for d in usr bin sbin lib lib64; do
  [ -e "/$d" ] || continue
  if [ -L "/$d" ]; then
    [ -e "$root/$d" ] || [ -L "$root/$d" ] || ln -s "$(readlink "/$d")" "$root/$d"
    continue
  fi
  mkdir -p "$root/$d"
  mount --bind "/$d" "$root/$d"
  mount -o remount,bind,ro "$root/$d"
done
mkdir -p "$root/proc" "$root/dev" "$root/tmp"
mount -t proc proc "$root/proc"
for p in sys sysrq-trigger irq bus fs; do
  [ -e "$root/proc/$p" ] || continue
  mount --bind "$root/proc/$p" "$root/proc/$p"
  mount -o remount,bind,ro "$root/proc/$p"
done
mount -t tmpfs -o size=64k,mode=755 tmpfs "$root/dev"
for n in null zero random urandom; do : > "$root/dev/$n"; mount --bind "/dev/$n" "$root/dev/$n"; done
cd "$root"
mkdir -p .capstan-oldroot
pivot_root . .capstan-oldroot
cd /
umount -l /.capstan-oldroot
rmdir /.capstan-oldroot
cd "$cwd"
exec setpriv --no-new-privs --bounding-set -all,${MACHINE_ROOT_CAPABILITIES} --inh-caps -all -- "$@"
`;

/** The PATH of a confined instruction: the host's program directories, bound read-only into the machine. */
export const CONFINED_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

/**
 * How a confined instruction is started: `unshare` with the script above, then the instruction. `unshare` gets
 * SIGKILL when the agent that started it dies (`setpriv --pdeathsig`), and takes the namespace with it
 * (`--kill-child`): an agent killed mid-instruction leaves nothing running that could finish next to its resumed
 * run, as systemd stops a real agent's whole cgroup before restarting it.
 */
export function confinedInvocation(
  hostDir: string,
  workingDirectory: string,
  command: string,
  args: readonly string[],
): { command: string; args: string[] } {
  return {
    command: 'setpriv',
    args: [
      '--pdeathsig',
      'KILL',
      '--',
      'unshare',
      '--mount',
      '--pid',
      '--fork',
      '--kill-child',
      '--propagation',
      'private',
      '--',
      '/bin/sh',
      '-c',
      CONFINE_SCRIPT,
      'capstan-confine',
      hostDir,
      workingDirectory,
      command,
      ...args,
    ],
  };
}

let available: boolean | undefined;

/**
 * Whether this host can confine instructions (the script above runs and a program runs inside): needs `unshare`,
 * `pivot_root`, `setpriv` and the right to make mount and PID namespaces. Tried once per process.
 */
export function confinementAvailable(): boolean {
  if (available === undefined) {
    const dir = mkdtempSync(join(tmpdir(), 'capstan-confine-probe-'));
    try {
      const { command, args } = confinedInvocation(dir, '/', 'true', []);
      available = spawnSync(command, args, { timeout: 10_000, stdio: 'ignore' }).status === 0;
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  return available;
}
