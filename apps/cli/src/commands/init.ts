import { AppsV1Api } from '@kubernetes/client-node';
import { Command } from 'commander';
import { applyOrder, deployDir, installCrds, loadKustomization, ManifestApplier } from '@capstan/manifests';
import { loadKubeConfig, type KubeconfigOptions } from '../kubeconfig.js';
import { startLocalServices, stopLocalServices } from '@capstan/testing';
import { CliError, type Output } from '../output.js';

const FIELD_MANAGER = 'capstan-cli';

const seconds = (value: string): number => {
  const match = /^(\d+)(s|m)?$/.exec(value);
  if (!match) throw new Error(`expected a duration like 300s or 5m, got "${value}"`);
  return Number(match[1]) * (match[2] === 'm' ? 60 : 1);
};

interface InitOptions extends KubeconfigOptions {
  local?: boolean;
  natsUrl: string;
  waitTimeout: number;
  logDir: string;
}

export function initCommand(output: Output): Command {
  return new Command('init')
    .description('Install Capstan into a management cluster: CRDs, RBAC and the service Deployments')
    .option('--local', 'install only the CRDs and run the five services here as local processes (the embedded default)')
    .option('--nats-url <url>', 'NATS server for --local', process.env['NATS_URL'] ?? 'nats://127.0.0.1:4222')
    .option('--log-dir <dir>', 'where --local writes the services’ logs', '.capstan/logs')
    .option('--wait-timeout <duration>', 'how long to wait for the components to be ready', seconds, 300)
    .option('--kubeconfig <path>', 'kubeconfig of the management cluster')
    .option('--kubeconfig-context <context>', 'context of the management cluster kubeconfig')
    .addHelpText('after', '\nExamples:\n  capstan init\n  capstan init --local --nats-url nats://127.0.0.1:4222')
    .action(async (opts: InitOptions) => {
      const kc = loadKubeConfig(opts);
      const applier = new ManifestApplier(kc);
      const manifests = applyOrder(loadKustomization(deployDir()));
      const crds = manifests.filter((m) => m.kind === 'CustomResourceDefinition');
      const progress = output.progress(`Installing ${crds.length} CRDs`);
      try {
        await installCrds(kc, applier, crds, { fieldManager: FIELD_MANAGER, timeoutMs: opts.waitTimeout * 1000 });
      } catch (error) {
        progress.fail();
        throw error;
      }
      progress.done(`Installed ${crds.length} CRDs`);

      if (opts.local) {
        await runLocally(opts, output, kubeconfigPathOf(opts));
        return;
      }
      const rest = manifests.filter((m) => m.kind !== 'CustomResourceDefinition');
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
    });
}

function kubeconfigPathOf(opts: KubeconfigOptions): string {
  const path = opts.kubeconfig ?? process.env['KUBECONFIG']?.split(':')[0];
  if (!path) throw new CliError('init --local needs --kubeconfig or $KUBECONFIG (the services run as separate processes)');
  return path;
}

async function runLocally(opts: InitOptions, output: Output, kubeconfigPath: string): Promise<void> {
  const progress = output.progress('Starting the services');
  const services = await startLocalServices({
    kubeconfigPath,
    natsUrl: opts.natsUrl,
    logDir: opts.logDir,
    onProgress: (name, state) => progress.update(`${state === 'ready' ? 'Started' : 'Starting'} ${name}`),
    readyTimeoutMs: opts.waitTimeout * 1000,
  }).catch((error: Error) => {
    progress.fail();
    throw error;
  });
  progress.done(`Running ${services.length} services (logs in ${opts.logDir})`);
  for (const s of services) output.line(`  ${s.name.padEnd(24)} ${s.url}  pid ${s.pid}`);
  output.line('Press Ctrl-C to stop.');
  await new Promise<void>((resolveWait) => {
    process.once('SIGINT', () => resolveWait());
    process.once('SIGTERM', () => resolveWait());
  });
  const stopping = output.progress('Stopping the services');
  await stopLocalServices(services);
  stopping.done('Stopped');
}
