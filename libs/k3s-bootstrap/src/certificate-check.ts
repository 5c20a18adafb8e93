import { k3sScriptArgs, k3sShellArgs } from './k3s-on-machine.js';

// Server certificate expiry (docs/day2.md): every server's plan runs `k3s certificate check --output json` as a
// periodic instruction, and a rotation prints the same check after `k3s certificate rotate`; the control plane
// provider reads the earliest expiry from either output and writes it where the core copies it to
// Machine.status.certificatesExpiryDate.

/** The periodic instruction's name in a server plan. */
export const CERTIFICATE_CHECK_INSTRUCTION = 'certificate-expiry';
/** How often a server reports (K3s's certificates last a year; an hour is plenty). */
export const CERTIFICATE_CHECK_PERIOD_SECONDS = 3600;

/** The periodic instruction (PlanPeriodicInstruction's shape) every server plan carries. */
export function certificateCheckInstruction(): {
  name: string;
  command: string;
  args: string[];
  periodSeconds: number;
  timeoutSeconds: number;
} {
  return {
    name: CERTIFICATE_CHECK_INSTRUCTION,
    command: 'sh',
    args: k3sShellArgs(['certificate', 'check', '--output', 'json']),
    periodSeconds: CERTIFICATE_CHECK_PERIOD_SECONDS,
    timeoutSeconds: 60,
  };
}

/**
 * `k3s certificate rotate [--service s]...` as Rancher's rotation plan runs it: K3s issues the new certificates on its
 * next start, so a server that runs under systemd is stopped first and started after (the sim's stand-in reloads them
 * itself); then the check, whose output carries the new expiry.
 */
export function certificateRotateArgs(services: readonly string[] = []): string[] {
  const script = [
    'restart=""',
    'if command -v systemctl >/dev/null 2>&1 && systemctl is-active --quiet k3s 2>/dev/null; then',
    '  systemctl stop k3s',
    '  restart=1',
    'fi',
    'k3s certificate rotate "$@"',
    'if [ -n "$restart" ]; then systemctl start k3s; fi',
    'k3s certificate check --output json',
  ].join('\n');
  return k3sScriptArgs(
    script,
    services.flatMap((s) => ['--service', s]),
  );
}

/** The largest check output read (a server has a few dozen certificates at most). */
const MAX_CHECK_OUTPUT = 256 * 1024;

/**
 * The earliest expiry among the certificates a check printed (its JSON array, the last one in the output), or
 * undefined when there is none. The output is the machine's to write: only well-formed entries count.
 */
export function certificatesExpiryIn(output: string): Date | undefined {
  if (output.length > MAX_CHECK_OUTPUT) return undefined;
  const start = output.lastIndexOf('\n[');
  const json = (start >= 0 ? output.slice(start + 1) : output).trim();
  if (!json.startsWith('[')) return undefined;
  let entries: unknown;
  try {
    entries = JSON.parse(json);
  } catch {
    return undefined;
  }
  if (!Array.isArray(entries)) return undefined;
  let earliest: number | undefined;
  for (const entry of entries as unknown[]) {
    const expiry = (entry as { expiryTime?: unknown } | null)?.expiryTime;
    const ms = typeof expiry === 'string' ? Date.parse(expiry) : NaN;
    if (!Number.isNaN(ms) && (earliest === undefined || ms < earliest)) earliest = ms;
  }
  return earliest === undefined ? undefined : new Date(earliest);
}
