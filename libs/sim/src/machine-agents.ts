import { existsSync, mkdirSync, unwatchFile, watchFile } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { KubeClient } from '@capstan/kube';
import {
  agentKubeConfig,
  confinementAvailable,
  DEFAULT_AGENT_CONFIG_PATH,
  HostRoot,
  loadAgentConfig,
  NodeAgent,
  readAgentToken,
} from '@capstan/node-agent';
import { repoRoot } from '@capstan/testing/local-host';
import { SIM_K3S_REQUEST_PATH } from './k3s-commands.js';
import { SIM_INSTALL_RECORD_PATH } from './machine-root.js';
import type { NodeAgentMode } from './options.js';
import { OwnedProcess } from './owned-process.js';

interface RunningAgent {
  stop(): Promise<void>;
  /** Process mode: the agent process, restarted by the supervisor when it died. */
  process?: OwnedProcess;
  restarts: number;
}

/** How often a machine's install record is looked at for a new install (cheap: one stat). */
const INSTALL_POLL_MS = 500;
/** How often the agent processes are checked; a dead one is started again (a real host's service manager would). */
const SUPERVISE_MS = 2_000;

/**
 * The node agents of the sim's machines (docs/node-agent.md), each rooted in its machine's directory: a process per
 * machine by default (adopted again after a provider restart through its pid file), or all in the provider's
 * process for scale runs. Also watches each machine's install record, so a plan that reinstalls K3s reaches the
 * sim runtime at once.
 */
export class MachineAgents {
  private readonly agents = new Map<string, RunningAgent>();
  /** The machine files watched per machine (its install record; a server's k3s requests too). */
  private readonly watched = new Map<string, string[]>();
  private supervisor: NodeJS.Timeout | undefined;
  private supervising = false;

  constructor(
    private readonly mode: NodeAgentMode,
    private readonly logger: Logger,
    private readonly main = join(repoRoot(), 'apps/node-agent/dist/main.js'),
  ) {
    // Every machine's instructions run confined to its directory (docs/security.md); a host that cannot make the
    // namespaces gets machines whose plans fail with that reason, never a tenant's program running on the host.
    if (mode !== 'off' && !confinementAvailable()) {
      logger.warn(
        'this host cannot confine sim machines (mount and PID namespaces with unshare, pivot_root, setpriv): their plan instructions are refused',
      );
    }
  }

  /** Machines with an agent or an install watch here. */
  keys(): string[] {
    return [...new Set([...this.agents.keys(), ...this.watched.keys()])];
  }

  get count(): number {
    return this.agents.size;
  }

  /**
   * Starts (or adopts) the agent of a machine whose bootstrap data installed one; a no-op when it runs. Its pid file
   * and log go to `recordsDir`, outside the machine's root.
   */
  async ensure(machineKey: string, root: string, recordsDir: string): Promise<void> {
    if (this.mode === 'off' || this.agents.has(machineKey)) return;
    if (!existsSync(join(root, DEFAULT_AGENT_CONFIG_PATH))) return;
    mkdirSync(recordsDir, { recursive: true, mode: 0o700 });
    if (this.mode === 'in-process') {
      const host = new HostRoot(root, { confined: true });
      const config = loadAgentConfig(host, DEFAULT_AGENT_CONFIG_PATH);
      const client = new KubeClient(agentKubeConfig(host, config), { fieldManager: 'capstan-node-agent' });
      const agent = new NodeAgent({
        client,
        namespace: config.namespace,
        secretName: config.secretName,
        root: host,
        // The agent's records name processes it kills: outside the machine's root, where its tenant cannot forge them.
        stateDir: join(recordsDir, 'agent-state'),
        token: { file: config.tokenFile, read: () => readAgentToken(host, config) },
        logger: this.logger.child({ machine: machineKey }),
      });
      agent.start();
      this.agents.set(machineKey, {
        stop: async () => {
          await agent.stop();
          await client.close();
        },
        restarts: 0,
      });
      return;
    }
    const process_ = new OwnedProcess({
      name: 'node-agent',
      dir: recordsDir,
      command: process.execPath,
      args: [this.main, '--host-root', root, '--health-port', '0', '--config', DEFAULT_AGENT_CONFIG_PATH, '--state-dir', join(recordsDir, 'agent-state'), '--confine'],
    });
    const outcome = await process_.start();
    this.logger.info({ machine: machineKey, pid: process_.pid, outcome }, 'node agent running');
    this.agents.set(machineKey, { stop: () => process_.stop(5_000), process: process_, restarts: 0 });
    this.supervise();
  }

  /** How often the machine's agent process was found dead and started again by this provider. */
  restartsOf(machineKey: string): number {
    return this.agents.get(machineKey)?.restarts ?? 0;
  }

  /**
   * Starts the supervisor: an agent process that died (killed, crashed on bad input) is started again within a few
   * seconds and the log says so, as systemd restarts a real host's agent. Its plan resumes from its records.
   */
  private supervise(): void {
    if (this.supervisor) return;
    this.supervisor = setInterval(() => void this.restartDead(), SUPERVISE_MS);
    this.supervisor.unref();
  }

  private async restartDead(): Promise<void> {
    if (this.supervising) return;
    this.supervising = true;
    try {
      for (const [machineKey, agent] of this.agents) {
        if (!agent.process || agent.process.alive()) continue;
        agent.restarts++;
        try {
          await agent.process.start();
          this.logger.warn({ machine: machineKey, pid: agent.process.pid, restarts: agent.restarts }, 'node agent had exited: started again');
        } catch (error) {
          this.logger.warn({ machine: machineKey, restarts: agent.restarts, err: { message: (error as Error).message } }, 'node agent had exited and could not be started again');
        }
      }
    } finally {
      this.supervising = false;
    }
  }

  /** Calls `onInstall` when the machine's K3s is installed again (its install record changes). */
  watchInstalls(machineKey: string, root: string, onInstall: () => void): void {
    this.watchMachineFile(machineKey, join(root, SIM_INSTALL_RECORD_PATH), onInstall);
  }

  /**
   * Calls `onRequest` when the machine's stand-in `k3s` binary leaves a request (an etcd snapshot or restore a plan
   * asked for), one at a time: a change seen while one is answered is looked at once that is done.
   */
  watchK3sRequests(machineKey: string, root: string, onRequest: () => Promise<unknown>): void {
    let busy = false;
    let again = false;
    const answer = (): void => {
      if (busy) {
        again = true;
        return;
      }
      busy = true;
      void onRequest()
        .catch((error: unknown) => this.logger.warn({ machine: machineKey, err: (error as Error).message }, 'k3s request not answered'))
        .finally(() => {
          busy = false;
          if (again) {
            again = false;
            answer();
          }
        });
    };
    this.watchMachineFile(machineKey, join(root, SIM_K3S_REQUEST_PATH), answer);
  }

  private watchMachineFile(machineKey: string, file: string, onChange: () => void): void {
    const files = this.watched.get(machineKey) ?? [];
    if (files.includes(file)) return;
    this.watched.set(machineKey, [...files, file]);
    watchFile(file, { interval: INSTALL_POLL_MS, persistent: false }, (current, previous) => {
      if (current.mtimeMs !== previous.mtimeMs) onChange();
    });
  }

  private unwatch(machineKey: string): void {
    for (const file of this.watched.get(machineKey) ?? []) unwatchFile(file);
    this.watched.delete(machineKey);
  }

  /** Stops the machine's agent and its install watch (the machine is gone, or the provider stops). */
  async remove(machineKey: string): Promise<void> {
    this.unwatch(machineKey);
    const agent = this.agents.get(machineKey);
    this.agents.delete(machineKey);
    await agent?.stop();
  }

  /**
   * Another replica of the provider takes the machine over: an in-process agent stops (it lives here), an agent
   * process keeps running for the new owner to adopt through its pid file.
   */
  async detach(machineKey: string): Promise<void> {
    this.unwatch(machineKey);
    const agent = this.agents.get(machineKey);
    this.agents.delete(machineKey);
    if (this.mode === 'in-process') await agent?.stop();
  }

  /** Every agent is detached (see detach): a sharded provider stops, the others or its next start adopt them. */
  async detachAll(): Promise<void> {
    clearInterval(this.supervisor);
    this.supervisor = undefined;
    await Promise.all([...this.agents.keys(), ...this.watched.keys()].map((key) => this.detach(key)));
  }

  /**
   * The provider stops gracefully: the agents stop with it, as its API servers do (a provider killed without
   * stopping leaves agent processes running; the next one adopts them through their pid files).
   */
  async shutdown(): Promise<void> {
    clearInterval(this.supervisor);
    this.supervisor = undefined;
    for (const files of this.watched.values()) for (const file of files) unwatchFile(file);
    this.watched.clear();
    await Promise.all([...this.agents.values()].map((a) => a.stop()));
    this.agents.clear();
  }
}
