import { existsSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The provider's work dir: everything the sim writes lives below it, so a host's file system is never
 * touched elsewhere. Layout:
 * - `etcd/`                         the provider's own etcd (when no etcd URL is given)
 * - `shared/`                       the shared-mode API server
 * - `clusters/<namespace>/<name>/`  a dedicated cluster API server: certificates, token file, pid file, log
 * - `machines/<namespace>/<name>/`  a machine's root: what its bootstrap data wrote (the sentinel file)
 * - `machine-records/<namespace>/<name>/`  what the sim keeps about a machine (its node agent's pid file and log):
 *   outside the root, which the machine's tenant writes (a forged pid file must not name a process to signal)
 */
export class SimStateDir {
  constructor(readonly root: string) {}

  get etcdDir(): string {
    return join(this.root, 'etcd');
  }

  get sharedDir(): string {
    return join(this.root, 'shared');
  }

  clusterDir(namespace: string, name: string): string {
    return join(this.root, 'clusters', namespace, name);
  }

  machineDir(namespace: string, name: string): string {
    return join(this.root, 'machines', namespace, name);
  }

  machineRecordsDir(namespace: string, name: string): string {
    return join(this.root, 'machine-records', namespace, name);
  }

  /** Creates the folder (private to this user: certificates and keys live here). */
  ensure(dir: string): string {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    return dir;
  }

  remove(dir: string): void {
    rmSync(dir, { recursive: true, force: true });
  }

  /** Cluster folders an earlier run left, to find API servers it left running. */
  clusterDirs(): { namespace: string; name: string; dir: string }[] {
    const base = join(this.root, 'clusters');
    if (!existsSync(base)) return [];
    return readdirSync(base, { withFileTypes: true })
      .filter((ns) => ns.isDirectory())
      .flatMap((ns) =>
        readdirSync(join(base, ns.name), { withFileTypes: true })
          .filter((cluster) => cluster.isDirectory())
          .map((cluster) => ({
            namespace: ns.name,
            name: cluster.name,
            dir: join(base, ns.name, cluster.name),
          })),
      );
  }
}
