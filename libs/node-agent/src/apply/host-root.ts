import { join } from 'node:path';

/**
 * Where the machine's filesystem is: `/` on a real host; on the sim, the machine's own directory under the sim state
 * dir, so every machine's agent writes its files and runs its commands there. Plan paths are validated to be absolute
 * with no `..` (parsePlan), so joined under the root they cannot leave it.
 */
export class HostRoot {
  constructor(readonly dir: string) {}

  resolve(machinePath: string): string {
    return this.dir === '/' ? machinePath : join(this.dir, machinePath);
  }
}
