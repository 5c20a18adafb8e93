// The demo until the services exist: starts the local management environment and says how to reach it.
import { startTestEnvironment } from './test-environment.js';

const once = process.argv.includes('--once');
const out = (line: string) => process.stdout.write(`${line}\n`);

const environment = await startTestEnvironment({ log: (line) => process.stderr.write(`${line}\n`) });
out(`management cluster: export KUBECONFIG=${environment.kubeconfigPath}`);
out(`event bus:          ${environment.natsUrl}`);
for (const p of environment.processes) out(`  ${p.name.padEnd(15)} pid ${p.pid}`);

const shutdown = async () => {
  await environment.stop();
  out('stopped');
  process.exit(0);
};
if (once) await shutdown();
else {
  out('running until Ctrl-C');
  process.on('SIGINT', () => void shutdown());
  process.on('SIGTERM', () => void shutdown());
}
