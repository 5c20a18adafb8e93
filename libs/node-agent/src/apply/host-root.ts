import { join } from 'node:path';

/** A machine path the agent refuses: not absolute, or climbing out with `..`. Names the path's role, not the path. */
export class HostPathError extends Error {
  constructor(readonly what: string) {
    super(`${what} must be an absolute machine path without '..' segments`);
    this.name = 'HostPathError';
  }
}

/**
 * Where the machine's filesystem is: `/` on a real host; on the sim, the machine's own directory under the sim state
 * dir, so every machine's agent writes its files and runs its commands there. Every machine path goes through
 * `resolve`, which refuses a relative one and any `..` segment, so a path from a plan or the agent's config cannot
 * leave the root whatever checked it before (parsePlan checks plan files too).
 */
export class HostRoot {
  /**
   * `confined`: the machine is one of several on this host (the sim), so its instructions run in their own mount and
   * PID namespace rooted at `dir` (confinement.ts), or not at all where the host cannot make one.
   */
  constructor(
    readonly dir: string,
    readonly options: { confined?: boolean } = {},
  ) {}

  get confined(): boolean {
    return this.options.confined === true;
  }

  /** The host path of a machine path; `what` names it in the error (`tokenFile`, `a probe's caCert`). */
  resolve(machinePath: string, what = 'a path'): string {
    if (!machinePath.startsWith('/') || machinePath.split('/').includes('..') || machinePath.includes('\0')) {
      throw new HostPathError(what);
    }
    return this.dir === '/' ? machinePath : join(this.dir, machinePath);
  }
}
