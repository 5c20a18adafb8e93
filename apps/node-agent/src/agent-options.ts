import { Command, Option } from 'commander';
import { DEFAULT_AGENT_CONFIG_PATH } from '@capstan/node-agent';

export interface AgentOptions {
  config: string;
  agentsFile?: string;
  hostRoot: string;
  /** The agent's own records (attempt.json), a host path; undefined: /var/lib/capstan/agent under the host root. */
  stateDir?: string;
  /** Run every instruction in its own mount and PID namespace rooted at the host root (a sim machine). */
  confine: boolean;
  healthPort: number;
  probePeriodMs: number;
  logLevel: string;
}

/** The agent's command line; every flag has an environment variable, as every Capstan service. */
export function parseAgentOptions(argv: string[]): AgentOptions {
  const program = new Command('capstan-node-agent')
    .description(
      'Applies the machine plans the management cluster writes to this machine\'s plan Secret, and reports back.',
    )
    .addOption(
      new Option('--config <path>', 'agent config (mode 0600): server, caFile, tokenFile, namespace, secretName')
        .env('CAPSTAN_AGENT_CONFIG')
        .default(DEFAULT_AGENT_CONFIG_PATH),
    )
    .addOption(
      new Option('--agents-file <path>', 'shared mode: a JSON list of { hostRoot, config }, one agent each').env(
        'CAPSTAN_AGENTS_FILE',
      ),
    )
    .addOption(
      new Option('--host-root <dir>', "the machine's filesystem root: plan paths and commands live under it")
        .env('CAPSTAN_HOST_ROOT')
        .default('/'),
    )
    .addOption(
      new Option('--state-dir <dir>', "the agent's own records, a host path (default: /var/lib/capstan/agent under the host root)").env(
        'CAPSTAN_AGENT_STATE_DIR',
      ),
    )
    .addOption(
      new Option('--confine', 'run instructions confined to the host root (own mount and PID namespace); refused where the host cannot')
        .env('CAPSTAN_AGENT_CONFINE')
        .default(false),
    )
    .addOption(
      new Option('--health-port <port>', '/healthz and /metrics on 127.0.0.1 (0: any free port, printed at start)')
        .env('CAPSTAN_AGENT_HEALTH_PORT')
        .default(10290)
        .argParser((v) => parsePort(v)),
    )
    .addOption(
      new Option('--probe-period <ms>', 'probe and resync period')
        .env('CAPSTAN_AGENT_PROBE_PERIOD_MS')
        .default(5000)
        .argParser((v) => parsePositive(v, '--probe-period')),
    )
    .addOption(new Option('--log-level <level>', 'pino level').env('LOG_LEVEL').default('info'))
    .exitOverride()
    .configureOutput({ writeErr: (s) => process.stderr.write(s) });
  program.parse(argv, { from: 'user' });
  const o = program.opts<{
    config: string;
    agentsFile?: string;
    hostRoot: string;
    stateDir?: string;
    confine: boolean;
    healthPort: number;
    probePeriod: number;
    logLevel: string;
  }>();
  return {
    config: o.config,
    ...(o.agentsFile && { agentsFile: o.agentsFile }),
    hostRoot: o.hostRoot,
    ...(o.stateDir && { stateDir: o.stateDir }),
    confine: o.confine === true,
    healthPort: o.healthPort,
    probePeriodMs: o.probePeriod,
    logLevel: o.logLevel,
  };
}

function parsePort(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 65535) throw new Error(`--health-port: ${value} is not a port`);
  return n;
}

function parsePositive(value: string, flag: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new Error(`${flag}: ${value} is not a positive integer`);
  return n;
}
