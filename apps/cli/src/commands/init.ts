import { AppsV1Api } from '@kubernetes/client-node';
import { Command, InvalidArgumentError } from 'commander';
import {
  applyOrder,
  deployDir,
  installAdmissionPolicies,
  installCrds,
  isAdmissionPolicy,
  loadKustomization,
  ManifestApplier,
  parseImageOverride,
  withImageOverrides,
  type ImageOverride,
} from '@capstan/manifests';
import { kubeconfigFile, loadKubeConfig, resolveKubeconfigSource, type KubeconfigOptions } from '../kubeconfig.js';
import { localServiceLines, startLocalServices, stopLocalServices } from '@capstan/testing';
import { CliError, type Output } from '../output.js';
import { connectEventBus, printableNatsUrl } from '../runtime/event-bus.js';
import { NATS_URL_DEFAULTS, readLocalEnv, resolveNatsTarget, type NatsTarget } from '../runtime/local-env.js';

const FIELD_MANAGER = 'capstan-cli';
/** deploy/'s Service of the fleet dashboard (docs/dashboard.md), HTTPS on port 8443. */
const DASHBOARD_SERVICE = 'capstan-dashboard';

const seconds = (value: string): number => {
  const match = /^(\d+)(s|m)?$/.exec(value);
  if (!match) throw new Error(`expected a duration like 300s or 5m, got "${value}"`);
  return Number(match[1]) * (match[2] === 'm' ? 60 : 1);
};

interface InitOptions extends KubeconfigOptions {
  local?: boolean;
  natsUrl?: string;
  waitTimeout: number;
  logDir: string;
  allInOne?: boolean;
  image: ImageOverride[];
}

const imageOverride = (value: string, previous: ImageOverride[]): ImageOverride[] => {
  try {
    return [...previous, parseImageOverride(value)];
  } catch (error) {
    throw new InvalidArgumentError((error as Error).message);
  }
};

export function initCommand(output: Output): Command {
  return new Command('init')
    .description('Install Capstan into a management cluster: CRDs, RBAC and the service Deployments')
    .option('--local', 'install only the CRDs and run the five services here as local processes (the embedded default)')
    .option('--nats-url <url>', `NATS server for --local ${NATS_URL_DEFAULTS}`)
    .option('--log-dir <dir>', 'where --local writes the services’ logs', '.capstan/logs')
    .option('--all-in-one', 'with --local: the five services in one process (less memory, for small installs)')
    .option(
      '--image <name=reference>',
      'run another image wherever deploy/ names image <name> (any tag), e.g. a mirror or one built locally; repeatable',
      imageOverride,
      [],
    )
    .option('--wait-timeout <duration>', 'how long to wait for the components to be ready', seconds, 300)
    .option('--kubeconfig <path>', 'kubeconfig of the management cluster')
    .option('--kubeconfig-context <context>', 'context of the management cluster kubeconfig')
    .addHelpText('after', '\nExamples:\n  capstan init\n  capstan init --image nats=registry.example.com/nats:2.11\n  capstan init --local --nats-url nats://127.0.0.1:4222')
    .action(async (opts: InitOptions) => {
      // deploy/ runs one Deployment per service (each with its own service account): the all-in-one is local only.
      if (opts.allInOne && !opts.local) throw new CliError('--all-in-one needs --local', 2);
      const kc = loadKubeConfig(opts);
      const local = opts.local ? await prepareLocal(opts, output) : undefined;
      const applier = new ManifestApplier(kc);
      const manifests = withImageOverrides(applyOrder(loadKustomization(deployDir())), opts.image);
      const crds = manifests.filter((m) => m.kind === 'CustomResourceDefinition');
      const policies = manifests.filter(isAdmissionPolicy);
      const progress = output.progress(`Installing ${crds.length} CRDs and ${policies.length} admission policy objects`);
      try {
        await installCrds(kc, applier, crds, { fieldManager: FIELD_MANAGER, timeoutMs: opts.waitTimeout * 1000 });
        await installAdmissionPolicies(applier, policies, { fieldManager: FIELD_MANAGER, timeoutMs: opts.waitTimeout * 1000 });
      } catch (error) {
        progress.fail();
        throw error;
      }
      progress.done(`Installed ${crds.length} CRDs and ${policies.length} admission policy objects`);

      if (local) {
        await runLocally(opts, output, local);
        return;
      }
      const rest = manifests.filter((m) => m.kind !== 'CustomResourceDefinition' && !isAdmissionPolicy(m));
      const applying = output.progress(`Applying ${rest.length} objects`);
      for (const manifest of rest) {
        applying.update(`Applying ${manifest.kind} ${manifest.metadata.name}`);
        await applier.apply(manifest, { fieldManager: FIELD_MANAGER });
      }
      applying.done(`Applied ${rest.length} objects`);

      const apps = kc.makeApiClient(AppsV1Api);
      const deployments = rest.filter((m) => m.kind === 'Deployment');
      const waiting = output.progress('Waiting for the Capstan services');
      const deadline = Date.now() + opts.waitTimeout * 1000;
      for (;;) {
        const pending: string[] = [];
        for (const d of deployments) {
          const current = await apps.readNamespacedDeployment({ name: d.metadata.name, namespace: d.metadata.namespace! });
          const want = current.spec?.replicas ?? 1;
          if ((current.status?.availableReplicas ?? 0) < want) pending.push(`${d.metadata.name} ${current.status?.availableReplicas ?? 0}/${want}`);
        }
        if (pending.length === 0) break;
        waiting.update(`Waiting for ${pending.join(', ')}`);
        if (Date.now() > deadline) {
          waiting.fail();
          throw new CliError(`not ready after ${opts.waitTimeout}s: ${pending.join(', ')}`);
        }
        await new Promise((r) => setTimeout(r, 2000));
      }
      waiting.done(`Capstan is ready (${deployments.length} services)`);
      const dashboard = rest.find((m) => m.kind === 'Service' && m.metadata.name === DASHBOARD_SERVICE);
      if (dashboard) {
        output.line(
          `Dashboard: kubectl -n ${dashboard.metadata.namespace} port-forward service/${DASHBOARD_SERVICE} 8443, then https://127.0.0.1:8443/dashboard`,
        );
        output.line('  sign in with a token: kubectl -n <namespace> create token <account> --audience capstan-dashboard');
      }
    });
}

interface LocalRun {
  kubeconfigPath: string;
  nats: NatsTarget;
  env: NodeJS.ProcessEnv;
  /** Known for `npm run env:up`'s cluster only: the CA of its API server's admission webhook client certificate. */
  webhookClientCaFile?: string;
}

/** What --local's services get, checked before anything is installed. */
async function prepareLocal(opts: InitOptions, output: Output): Promise<LocalRun> {
  const source = resolveKubeconfigSource(opts);
  const kubeconfigPath = kubeconfigFile(source);
  // Services against `npm run env:up`'s cluster keep the sim's workload API servers in that environment's
  // etcd and state dir, so `npm run env:down` stops them too (unless the caller chose others).
  const localEnv = source.origin.kind === 'env-file' ? readLocalEnv() : undefined;
  const env: NodeJS.ProcessEnv = {};
  if (localEnv?.etcdUrl && !process.env['CAPSTAN_SIM_ETCD_URL']) env['CAPSTAN_SIM_ETCD_URL'] = localEnv.etcdUrl;
  if (localEnv?.simStateDir && !process.env['CAPSTAN_SIM_STATE_DIR']) env['CAPSTAN_SIM_STATE_DIR'] = localEnv.simStateDir;

  // A dead NATS would otherwise surface as five services that never get ready, the reason only in their logs.
  const nats = resolveNatsTarget(opts.natsUrl);
  const probe = output.progress(`Connecting to NATS at ${printableNatsUrl(nats.url)}`);
  try {
    await (await connectEventBus(nats, { name: 'capstan-cli-init' })).close();
  } catch (error) {
    probe.fail();
    throw error;
  }
  probe.done();
  return { kubeconfigPath, nats, env, ...(localEnv?.webhookClientCaPath ? { webhookClientCaFile: localEnv.webhookClientCaPath } : {}) };
}

async function runLocally(opts: InitOptions, output: Output, { kubeconfigPath, nats, env, webhookClientCaFile }: LocalRun): Promise<void> {
  const progress = output.progress('Starting the services');
  const services = await startLocalServices({
    kubeconfigPath,
    natsUrl: nats.url,
    env,
    logDir: opts.logDir,
    conversionWebhook: true,
    webhookClientCaFile,
    allInOne: opts.allInOne,
    onProgress: (name, state) => progress.update(`${state === 'ready' ? 'Started' : 'Starting'} ${name}`),
    readyTimeoutMs: opts.waitTimeout * 1000,
  }).catch((error: Error) => {
    progress.fail();
    throw error;
  });
  progress.done(`Running ${services.length} services${opts.allInOne ? ' in one process' : ''} (logs in ${opts.logDir})`);
  for (const line of localServiceLines(services)) output.line(line);
  output.line('Press Ctrl-C to stop.');
  await new Promise<void>((resolveWait) => {
    process.once('SIGINT', () => resolveWait());
    process.once('SIGTERM', () => resolveWait());
  });
  const stopping = output.progress('Stopping the services');
  await stopLocalServices(services);
  stopping.done('Stopped');
}
