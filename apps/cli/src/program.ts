import { Command } from 'commander';
import { deleteCommand } from './commands/delete.js';
import { describeCommand } from './commands/describe.js';
import { eventsCommand } from './commands/events.js';
import { generateCommand } from './commands/generate.js';
import { initCommand } from './commands/init.js';
import { getCommand } from './commands/get.js';
import { planCommand } from './commands/plan.js';
import { scaleCommand } from './commands/scale.js';
import { snapshotCommand } from './commands/snapshot.js';
import { certsCommand } from './commands/certs.js';
import { upgradeCommand } from './commands/upgrade.js';
import { type Output } from './output.js';

export function buildProgram(output: Output): Command {
  const program = new Command('capstan')
    .description(
      'Capstan: Cluster API in TypeScript. Create, scale, upgrade, heal and delete Kubernetes clusters.',
    )
    .version('0.1.0')
    .showHelpAfterError()
    .configureOutput({ writeErr: (text) => process.stderr.write(text) });
  program.addCommand(initCommand(output));
  program.addCommand(generateCommand(output));
  program.addCommand(getCommand(output));
  program.addCommand(scaleCommand(output));
  program.addCommand(upgradeCommand(output));
  program.addCommand(describeCommand(output));
  program.addCommand(deleteCommand(output));
  program.addCommand(eventsCommand(output));
  program.addCommand(planCommand(output));
  program.addCommand(snapshotCommand(output));
  program.addCommand(certsCommand(output));
  return program;
}
