import { existsSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { freePort } from '@capstan/testing/local-host';
import { SimError } from './errors.js';
import {
  clientUrlOf,
  etcdDataDir,
  peerUrlOf,
  recordedPorts,
  recordJoin,
  reservePorts,
  restoreEtcdSnapshot,
  saveEtcdSnapshot,
  startOwnedEtcd,
  type SimEtcd,
} from './etcd.js';
import { addLearner, listMembers, promoteMember, removeMember, type EtcdMember } from './etcd-membership.js';
import { stopRecordedProcess } from './owned-process.js';
import { setTimeout as sleep } from 'node:timers/promises';
import { waitFor } from './wait.js';

export interface EtcdMemberSetOptions {
  /** Where the members live, one directory each (the provider's, never a machine root). */
  dir: string;
  clusterKey: string;
  binaries: { etcd: () => string; etcdutl: () => string };
  quotaBackendBytes: number;
  env?: NodeJS.ProcessEnv;
  logger: Logger;
}

/** How long a learner gets to catch up before its join is undone. */
const PROMOTE_TIMEOUT_MS = 30_000;
/** How long an add or a removal waits for the members to have been connected long enough (etcd wants 5 s). */
const RECONFIGURE_TIMEOUT_MS = 20_000;
/** A member's name is its server's node name: a DNS label, used as a directory name. */
const MEMBER_NAME = /^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/;

/**
 * The etcd members of one dedicated cluster, one per server machine, as K3s's embedded etcd runs them: the first
 * server starts a cluster of one, each later server joins as a learner and is promoted once it has caught up, a
 * deleted server's member is removed, a snapshot is saved from the member of the server that takes it, and a
 * cluster reset rebuilds the cluster from a snapshot on one member while the others' data goes (K3s's tombstone):
 * they join again, empty, when their servers next start.
 */
export class EtcdMemberSet {
  private readonly running = new Map<string, SimEtcd>();

  constructor(private readonly options: EtcdMemberSetOptions) {}

  /** The members that have a directory here (started or not). */
  names(): string[] {
    if (!existsSync(this.options.dir)) return [];
    return readdirSync(this.options.dir, { withFileTypes: true })
      .filter((entry) => entry.isDirectory() && recordedPorts(join(this.options.dir, entry.name)))
      .map((entry) => entry.name)
      .sort();
  }

  /** The client URLs of the members running now (what the cluster's kube-apiserver is given). */
  clientUrls(): string[] {
    return [...this.running.entries()]
      .filter(([, etcd]) => etcd.alive())
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([, etcd]) => etcd.url);
  }

  /**
   * Every member with data starts (or is adopted), all at once: a cluster of three that stopped has no quorum until
   * two run, so none would turn healthy while started one after another. With no member yet, `first` starts a
   * cluster of one.
   */
  async startAll(first: string): Promise<void> {
    const names = this.names();
    if (names.length === 0) {
      await this.startMember(checkedName(first));
      return;
    }
    await Promise.all(
      names.filter((name) => !this.running.get(name)?.alive()).map((name) => this.startMember(name)),
    );
  }

  /** The server `name` has a running member: its own again after a restart, or a new one that joins the others. */
  async ensure(name: string): Promise<void> {
    const member = checkedName(name);
    if (this.running.get(member)?.alive()) return;
    const dir = this.memberDir(member);
    if (existsSync(etcdDataDir(dir)) || this.names().length === 0) {
      await this.startMember(member);
      return;
    }
    await this.join(member);
  }

  /**
   * A server machine is gone: its member leaves the cluster (removed through another member first, so quorum is
   * counted without it before it stops) and its data is deleted. The last member is only stopped and deleted.
   */
  async remove(name: string, graceMs?: number): Promise<void> {
    const member = checkedName(name);
    const via = this.otherRunningUrl(member);
    if (via) {
      const listed = (await listMembers(via)).find((m) => m.name === member);
      if (listed) await removeWhenSafe(via, listed.ID, member);
    }
    await this.stopMember(member, graceMs);
    rmSync(this.memberDir(member), { recursive: true, force: true });
    this.options.logger.info({ cluster: this.options.clusterKey, member }, 'etcd member removed');
  }

  /** `k3s etcd-snapshot save` on server `name`: a snapshot of its own member. */
  async saveSnapshot(name: string, file: string, maxBytes: number): Promise<number> {
    const member = checkedName(name);
    const etcd = this.running.get(member);
    if (!etcd?.alive())
      throw new SimError(
        `the etcd member of ${member} is not running: it cannot be snapshotted`,
        'EtcdRequestFailed',
        { cluster: this.options.clusterKey, member },
      );
    return saveEtcdSnapshot(etcd.url, file, maxBytes);
  }

  /**
   * `k3s server --cluster-reset --cluster-reset-restore-path` on server `name`: every member stops, `name`'s data is
   * rebuilt from the snapshot as a cluster of one, and only then do the other members' data go (a snapshot that
   * does not check out is refused with every member's data as it was). The caller starts the members again.
   */
  async restore(name: string, file: string, graceMs: number): Promise<void> {
    const member = checkedName(name);
    await this.stopAll(graceMs);
    const dir = this.memberDir(member);
    if (!recordedPorts(dir)) {
      mkdirSync(dir, { recursive: true, mode: 0o700 });
      reservePorts(dir, { client: await freePort(), peer: await freePort() });
    }
    await restoreEtcdSnapshot(this.options.binaries.etcdutl(), dir, file, member);
    for (const other of this.names())
      if (other !== member) rmSync(this.memberDir(other), { recursive: true, force: true });
  }

  async stopAll(graceMs?: number): Promise<void> {
    const names = new Set([...this.running.keys(), ...this.names()]);
    await Promise.all([...names].map((name) => this.stopMember(name, graceMs)));
  }

  /** Forgets the running members without stopping them (another replica adopts them). */
  detach(): void {
    this.running.clear();
  }

  private memberDir(name: string): string {
    return join(this.options.dir, name);
  }

  private async startMember(name: string): Promise<void> {
    const dir = this.memberDir(name);
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const etcd = await startOwnedEtcd(this.options.binaries.etcd(), dir, {
      name,
      quotaBackendBytes: this.options.quotaBackendBytes,
      env: this.options.env,
    });
    this.running.set(name, etcd);
  }

  private async stopMember(name: string, graceMs?: number): Promise<void> {
    const etcd = this.running.get(name);
    this.running.delete(name);
    if (etcd) await etcd.stop(graceMs);
    else if (existsSync(this.memberDir(name))) await stopRecordedProcess(this.memberDir(name), 'etcd');
  }

  private otherRunningUrl(name: string): string | undefined {
    return [...this.running.entries()].find(([other, etcd]) => other !== name && etcd.alive())?.[1].url;
  }

  /** K3s's join: added as a learner through a running member, started empty, promoted once it has caught up. */
  private async join(name: string): Promise<void> {
    const via = this.otherRunningUrl(name);
    if (!via)
      throw new SimError(
        `no etcd member of ${this.options.clusterKey} runs for ${name} to join`,
        'EtcdJoinFailed',
        {
          cluster: this.options.clusterKey,
          member: name,
        },
      );
    // A member added before and never started (a join cut short) would count towards quorum once promoted, or
    // block the next add: it goes first.
    for (const stale of (await listMembers(via)).filter((m) => !m.name)) await removeMember(via, stale.ID);
    const dir = this.memberDir(name);
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const ports = { client: await freePort(), peer: await freePort() };
    reservePorts(dir, ports);
    const { added, members } = await whenSafe('adding', name, () => addLearner(via, peerUrlOf(ports)));
    try {
      recordJoin(dir, { initialCluster: initialClusterOf(members, added.ID, name) });
      await this.startMember(name);
      await waitFor(
        () =>
          promoteMember(via, added.ID).then(
            () => true,
            () => false,
          ),
        {
          what: `etcd learner ${name}`,
          timeoutMs: PROMOTE_TIMEOUT_MS,
          reason: 'EtcdJoinFailed',
          intervalMs: 200,
        },
      );
      // The leader committed the promotion; the new member applies it a moment later and refuses what a learner
      // may not serve until then. It is usable (by the API server, a removal, a snapshot) once it answers itself.
      await waitFor(
        () =>
          listMembers(clientUrlOf(ports)).then(
            (members) => members.some((m) => m.name === name && !m.isLearner),
            () => false,
          ),
        {
          what: `etcd member ${name} serving as a voter`,
          timeoutMs: PROMOTE_TIMEOUT_MS,
          reason: 'EtcdJoinFailed',
          intervalMs: 100,
        },
      );
      this.options.logger.info(
        { cluster: this.options.clusterKey, member: name, url: clientUrlOf(ports) },
        'etcd member joined',
      );
    } catch (error) {
      await this.stopMember(name, 0);
      await removeMember(via, added.ID).catch(() => undefined);
      rmSync(dir, { recursive: true, force: true });
      throw new SimError(
        `the etcd member of ${name} could not join ${this.options.clusterKey}: ${(error as Error).message.split('\n')[0]}`,
        'EtcdJoinFailed',
        { cluster: this.options.clusterKey, member: name },
      );
    }
  }
}

/**
 * etcd refuses to add or remove a member while the members have not all been connected for a few seconds (its strict
 * reconfiguration check: "unhealthy cluster"), as they are not just after the cluster restarted or a member left: the
 * change is asked again, for up to RECONFIGURE_TIMEOUT_MS.
 */
export async function whenSafe<T>(what: string, name: string, change: () => Promise<T>): Promise<T> {
  const deadline = Date.now() + RECONFIGURE_TIMEOUT_MS;
  for (;;) {
    try {
      return await change();
    } catch (error) {
      if (!/unhealthy cluster/i.test((error as Error).message) || Date.now() > deadline)
        throw new SimError(`${what} etcd member ${name}: ${(error as Error).message}`, 'EtcdRequestFailed', {
          member: name,
        });
      await sleep(500);
    }
  }
}

const removeWhenSafe = (url: string, id: string, name: string): Promise<void> =>
  whenSafe('removing', name, () => removeMember(url, id));

/**
 * The voting members (names, sorted) of the cluster whose members live in `dir`, as the first member that answers
 * lists them; [] when none answers. What a test or benchmark waits for after a join or a restore.
 */
export async function votingMembersIn(dir: string): Promise<string[]> {
  if (!existsSync(dir)) return [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const ports = entry.isDirectory() ? recordedPorts(join(dir, entry.name)) : undefined;
    if (!ports) continue;
    const members = await listMembers(clientUrlOf(ports)).catch(() => undefined);
    if (members)
      return members
        .filter((m) => m.name && !m.isLearner)
        .map((m) => m.name!)
        .sort();
  }
  return [];
}

/** Stops every member an earlier provider left running in `dir` (a cluster no machine claims any more). */
export async function stopRecordedMembers(dir: string): Promise<void> {
  if (!existsSync(dir)) return;
  const members = readdirSync(dir, { withFileTypes: true }).filter((entry) => entry.isDirectory());
  await Promise.all(members.map((entry) => stopRecordedProcess(join(dir, entry.name), 'etcd')));
}

/** `--initial-cluster` of a member that joins: every member by name and peer URL (the new one is still unnamed). */
function initialClusterOf(members: EtcdMember[], addedId: string, name: string): string {
  return members.map((m) => `${m.ID === addedId ? name : m.name}=${m.peerURLs?.[0] ?? ''}`).join(',');
}

function checkedName(name: string): string {
  if (!MEMBER_NAME.test(name))
    throw new SimError(
      `"${name.slice(0, 64)}" cannot name an etcd member (a DNS name is needed)`,
      'EtcdJoinFailed',
      {
        member: name.slice(0, 64),
      },
    );
  return name;
}
