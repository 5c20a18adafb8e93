import { k3sScriptArgs } from './k3s-on-machine.js';

// Secrets-encryption key rotation on K3s servers (docs/day2.md), as Rancher's planner runs it
// (pkg/capr/planner/encryptionkeyrotation.go): `k3s secrets-encrypt prepare|rotate|reencrypt` on one server, each
// followed by a restart of every server; each plan ends with `k3s secrets-encrypt status`, whose stage is checked
// before the next phase.

/** Restarts K3s where it runs under systemd (the sim's stand-in restarts its API server itself). */
const RESTART = [
  'if command -v systemctl >/dev/null 2>&1 && systemctl is-active --quiet k3s 2>/dev/null; then',
  '  systemctl restart k3s',
  'fi',
].join('\n');

/** `k3s secrets-encrypt <command>`, a restart, and the status. */
export function secretsEncryptArgs(command: 'prepare' | 'rotate' | 'reencrypt'): string[] {
  return k3sScriptArgs(`k3s secrets-encrypt "$1"\n${RESTART}\nk3s secrets-encrypt status`, [command]);
}

/** `k3s secrets-encrypt status` alone: where a background re-encryption stands. */
export function secretsEncryptStatusArgs(): string[] {
  return k3sScriptArgs('k3s secrets-encrypt status');
}

/** A server's restart after a stage, and its status (which must show the leader's stage). */
export function secretsEncryptRestartArgs(): string[] {
  return k3sScriptArgs(`${RESTART}\nk3s secrets-encrypt status`);
}

const STAGE_LINE = /^Current Rotation Stage:\s*([a-z_]{1,32})\s*$/m;

/** The `Current Rotation Stage` a status printed (the last one in the output), or undefined. */
export function encryptionStageIn(output: string): string | undefined {
  const matches = [...output.slice(-64 * 1024).matchAll(new RegExp(STAGE_LINE, 'gm'))];
  return matches.at(-1)?.[1];
}
