import type { K3sRole } from './k3s-config-spec.js';
import { NODE_AGENT_START_LINE } from './node-agent-files.js';
import {
  BOOTSTRAP_SENTINEL_DIR,
  BOOTSTRAP_SENTINEL_PATH,
  K3S_INSTALL_SCRIPT_PATH,
  K3S_INSTALL_SCRIPT_URL,
} from './paths.js';

/**
 * cloud-init joins `runcmd` into one /bin/sh script. `set -e` first makes any failing command stop it, so
 * the sentinel at the end is only written when every step, the user's included, succeeded.
 */
export const FAIL_FAST_LINE = 'set -e';

/**
 * K3s is installed by downloading install.sh to a file and then running it, not `curl | sh`: in a pipe a
 * failed download runs an empty script that "succeeds", and the sentinel would claim a bootstrap that
 * never happened.
 */
export const DOWNLOAD_INSTALL_SCRIPT_LINE = `mkdir -p ${K3S_INSTALL_SCRIPT_PATH.slice(0, K3S_INSTALL_SCRIPT_PATH.lastIndexOf('/'))} && curl -sfL ${K3S_INSTALL_SCRIPT_URL} -o ${K3S_INSTALL_SCRIPT_PATH}`;

export const SENTINEL_LINE = `mkdir -p ${BOOTSTRAP_SENTINEL_DIR} && touch ${BOOTSTRAP_SENTINEL_PATH}`;

export type K3sExec = 'server' | 'agent';

export interface InstallCommand {
  version: string;
  exec: K3sExec;
  airGapped: boolean;
  scriptPath: string;
}

export function execFor(role: K3sRole): K3sExec {
  return role === 'agent' ? 'agent' : 'server';
}

/** The install line; its values were validated (no quotes, no spaces) before they get here. */
export function installLine(command: InstallCommand): string {
  const skipDownload = command.airGapped ? 'INSTALL_K3S_SKIP_DOWNLOAD=true ' : '';
  return `${skipDownload}INSTALL_K3S_VERSION='${command.version}' INSTALL_K3S_EXEC='${command.exec}' sh ${command.scriptPath}`;
}

const INSTALL_LINE =
  /^(INSTALL_K3S_SKIP_DOWNLOAD=true )?INSTALL_K3S_VERSION='([^'\s]+)' INSTALL_K3S_EXEC='(server|agent)' sh (\/[A-Za-z0-9._/-]+)$/;

export function parseInstallLine(line: string): InstallCommand | undefined {
  const match = INSTALL_LINE.exec(line);
  if (!match) return undefined;
  return {
    airGapped: match[1] !== undefined,
    version: match[2]!,
    exec: match[3] as K3sExec,
    scriptPath: match[4]!,
  };
}

/** pre commands, the install (with its download when online), post commands, then the sentinel. */
export function runcmdLines(
  command: InstallCommand,
  preK3sCommands: readonly string[] = [],
  postK3sCommands: readonly string[] = [],
  startNodeAgent = false,
): string[] {
  return [
    FAIL_FAST_LINE,
    ...preK3sCommands,
    ...(command.airGapped ? [] : [DOWNLOAD_INSTALL_SCRIPT_LINE]),
    installLine(command),
    ...(startNodeAgent ? [NODE_AGENT_START_LINE] : []),
    ...postK3sCommands,
    SENTINEL_LINE,
  ];
}
