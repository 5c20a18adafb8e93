// The command line of `npm run chaos`: sizes default to the figures, so a bare run is the full suite.

export const PHASES = [
  'kills',
  'nats',
  'apiserver',
  'freeze',
  'agents',
  'malformed-events',
  'malformed-manifests',
] as const;
export type Phase = (typeof PHASES)[number];

export interface ChaosOptions {
  seed?: number;
  clusters: number;
  controlPlanes: number;
  workers: number;
  kills: number;
  /** A kill fires at a random moment in [0, this] after its round started. */
  killWindowSeconds: number;
  /** Each round (and each outage) deletes one random worker Machine first, so work is in flight when the fault hits. */
  churn: boolean;
  natsOutageSeconds: number;
  freezeSeconds: number;
  /** The agent phase: node agent processes, plans each, and how long the API server is down during one apply. */
  agents: number;
  agentPlans: number;
  agentApiOutageSeconds: number;
  convergeTimeoutSeconds: number;
  malformedEventsPerSubject: number;
  malformedManifests: number;
  phases: Phase[];
  /** Go on after a fault that did not converge (the later figures are then measured on a broken system). */
  keepGoing: boolean;
  /** Output directory; `.capstan/chaos/<timestamp>` by default. */
  out?: string;
  kubernetesVersion: string;
  /** Membership and leader Lease timings: `fast` (4 s / 3 s / 0.5 s, quick fail-over) or the services' `default` (15 s / 10 s / 2 s). */
  leaseTimings: 'fast' | 'default';
  help: boolean;
}

export const DEFAULT_OPTIONS: ChaosOptions = {
  clusters: 20,
  controlPlanes: 1,
  workers: 2,
  kills: 50,
  killWindowSeconds: 8,
  churn: true,
  natsOutageSeconds: 60,
  freezeSeconds: 60,
  agents: 4,
  agentPlans: 6,
  agentApiOutageSeconds: 60,
  convergeTimeoutSeconds: 300,
  malformedEventsPerSubject: 1000,
  malformedManifests: 200,
  phases: [...PHASES],
  keepGoing: false,
  kubernetesVersion: 'v1.34.4',
  leaseTimings: 'fast',
  help: false,
};

export const USAGE = `npm run chaos -- [options]

  --seed <n>                          random seed (printed on every run; give it to replay a run)
  --clusters <n>                      sim clusters, shared mode (default 20)
  --control-planes <n>                control plane machines per cluster (default 1)
  --workers <n>                       worker machines per cluster (default 2)
  --kills <n>                         SIGKILLs of a random replica of a random service (default 50)
  --kill-window-seconds <n>           a kill lands at a random moment within this after its round starts (default 8)
  --no-churn                          do not delete a random worker Machine at the start of each round
  --nats-outage-seconds <n>           how long NATS is stopped (default 60)
  --freeze-seconds <n>                how long the workload API server is SIGSTOPped (default 60)
  --agents <n>                        node agent processes of the agent phase (default 4)
  --agent-plans <n>                   plans each agent applies under agent faults (default 6)
  --agent-api-outage-seconds <n>      the management kube-apiserver is down this long during one apply (default 60)
  --converge-timeout-seconds <n>      give up waiting for convergence after a fault (default 300)
  --malformed-events-per-subject <n>  malformed events published on every catalogued subject (default 1000)
  --malformed-manifests <n>           malformed manifests applied (default 200)
  --phases <list>                     comma-separated subset of: ${PHASES.join(', ')}
  --skip <list>                       phases to leave out
  --keep-going                        continue after a fault that did not converge
  --kubernetes-version <v>            version of the sim clusters (default v1.34.4)
  --lease-timings fast|default        shard membership Leases: fast = 4 s / 3 s / 0.5 s (default), default = the services' 15 s / 10 s / 2 s
  --out <dir>                         where report.json and the logs go (default .capstan/chaos/<timestamp>)
`;

export class OptionsError extends Error {}

function count(flag: string, raw: string | undefined, min = 0): number {
  if (raw === undefined || raw.startsWith('--')) throw new OptionsError(`${flag} needs a value`);
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min)
    throw new OptionsError(`${flag} must be an integer >= ${min}, got ${JSON.stringify(raw)}`);
  return value;
}

function phaseList(flag: string, raw: string | undefined): Phase[] {
  if (raw === undefined || raw.startsWith('--')) throw new OptionsError(`${flag} needs a value`);
  const names = raw
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  for (const name of names) {
    if (!(PHASES as readonly string[]).includes(name))
      throw new OptionsError(`${flag}: unknown phase ${JSON.stringify(name)}; phases: ${PHASES.join(', ')}`);
  }
  return names as Phase[];
}

export function parseOptions(argv: readonly string[]): ChaosOptions {
  const options: ChaosOptions = { ...DEFAULT_OPTIONS, phases: [...DEFAULT_OPTIONS.phases] };
  let skip: Phase[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const [flag, inline] = arg.includes('=')
      ? [arg.slice(0, arg.indexOf('=')), arg.slice(arg.indexOf('=') + 1)]
      : [arg, undefined];
    const value = () => {
      if (inline !== undefined) return inline;
      i++;
      return argv[i];
    };
    switch (flag) {
      case '--seed': {
        const seed = count(flag, value());
        if (seed > 0xffffffff) throw new OptionsError('--seed must be below 2^32');
        options.seed = seed;
        break;
      }
      case '--clusters':
        options.clusters = count(flag, value(), 1);
        break;
      case '--control-planes':
        options.controlPlanes = count(flag, value(), 1);
        break;
      case '--workers':
        options.workers = count(flag, value(), 1);
        break;
      case '--kills':
        options.kills = count(flag, value());
        break;
      case '--kill-window-seconds':
        options.killWindowSeconds = count(flag, value());
        break;
      case '--no-churn':
        options.churn = false;
        break;
      case '--nats-outage-seconds':
        options.natsOutageSeconds = count(flag, value());
        break;
      case '--freeze-seconds':
        options.freezeSeconds = count(flag, value());
        break;
      case '--agents':
        options.agents = count(flag, value(), 1);
        break;
      case '--agent-plans':
        options.agentPlans = count(flag, value(), 1);
        break;
      case '--agent-api-outage-seconds':
        options.agentApiOutageSeconds = count(flag, value());
        break;
      case '--converge-timeout-seconds':
        options.convergeTimeoutSeconds = count(flag, value(), 1);
        break;
      case '--malformed-events-per-subject':
        options.malformedEventsPerSubject = count(flag, value());
        break;
      case '--malformed-manifests':
        options.malformedManifests = count(flag, value());
        break;
      case '--phases':
        options.phases = phaseList(flag, value());
        break;
      case '--skip':
        skip = phaseList(flag, value());
        break;
      case '--keep-going':
        options.keepGoing = true;
        break;
      case '--kubernetes-version': {
        const v = value();
        if (!v || !/^v\d+\.\d+\.\d+$/.test(v))
          throw new OptionsError('--kubernetes-version must look like v1.34.4');
        options.kubernetesVersion = v;
        break;
      }
      case '--lease-timings': {
        const v = value();
        if (v !== 'fast' && v !== 'default')
          throw new OptionsError('--lease-timings must be fast or default');
        options.leaseTimings = v;
        break;
      }
      case '--out': {
        const v = value();
        if (!v) throw new OptionsError('--out needs a value');
        options.out = v;
        break;
      }
      case '-h':
      case '--help':
        options.help = true;
        break;
      default:
        throw new OptionsError(`unknown option ${JSON.stringify(arg)}\n\n${USAGE}`);
    }
  }
  options.phases = PHASES.filter((p) => options.phases.includes(p) && !skip.includes(p));
  return options;
}
