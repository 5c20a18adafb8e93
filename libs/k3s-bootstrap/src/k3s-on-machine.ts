// Running the machine's k3s from a plan instruction (docs/day2.md): install.sh puts the binary in /usr/local/bin, or in
// /opt/bin where /usr/local/bin is read-only (as on a sim machine); the agent says where the machine's root is.

/** A shell function `k3s` that runs the installed binary, or fails with exit code 127 saying where it looked. */
export const K3S_SHELL_FUNCTION = [
  'k3s() {',
  '  for d in /usr/local/bin /opt/bin; do',
  '    b="${CAPSTAN_HOST_ROOT%/}$d/k3s"',
  '    if [ -x "$b" ]; then "$b" "$@"; return; fi',
  '  done',
  '  echo "k3s is not installed in /usr/local/bin or /opt/bin" >&2',
  '  return 127',
  '}',
].join('\n');

/** `sh -c` arguments that run `k3s <args>` on the machine (the arguments are passed as they are, never re-parsed). */
export function k3sShellArgs(args: readonly string[]): string[] {
  return ['-c', `${K3S_SHELL_FUNCTION}\nk3s "$@"`, 'k3s', ...args];
}

/** `sh -c` arguments that run a script in which `k3s` runs the machine's binary; `args` are the script's `$@`. */
export function k3sScriptArgs(script: string, args: readonly string[] = []): string[] {
  return ['-c', `set -e\n${K3S_SHELL_FUNCTION}\n${script}`, 'k3s', ...args];
}
