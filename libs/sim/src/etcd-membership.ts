import { setTimeout as sleep } from 'node:timers/promises';
import { SimError } from './errors.js';
import { postEtcdGateway } from './etcd-gateway.js';

// etcd's Cluster API (member list, add, promote, remove) through its JSON gateway: what K3s's embedded etcd does when
// a server joins (as a learner, promoted once it has caught up) or its Node is deleted.

/** A member as the gateway lists it (IDs are uint64, so JSON carries them as strings). */
export interface EtcdMember {
  ID: string;
  /** Empty until a member that was added has started. */
  name?: string;
  peerURLs?: string[];
  clientURLs?: string[];
  isLearner?: boolean;
}

const MEMBER_REQUEST_TIMEOUT_MS = 5_000;

/** An election under way (a member just left or restarted): the same request answers once a leader is elected. */
const ELECTION = /leader changed|no leader|request timed out/i;
const ELECTION_RETRIES = 20;
const ELECTION_WAIT_MS = 250;

async function gateway<T>(url: string, path: string, body: object): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await postEtcdGateway<T>(url, `/v3/cluster/member/${path}`, body, {
        what: `member ${path}`,
        timeoutMs: MEMBER_REQUEST_TIMEOUT_MS,
      });
    } catch (error) {
      if (attempt >= ELECTION_RETRIES || !ELECTION.test((error as Error).message)) throw error;
      await sleep(ELECTION_WAIT_MS);
    }
  }
}

export async function listMembers(url: string): Promise<EtcdMember[]> {
  return (await gateway<{ members?: EtcdMember[] }>(url, 'list', { linearizable: true })).members ?? [];
}

/** Adds a learner at `peerUrl`: it does not count towards quorum until promoted. Returns it and every member. */
export async function addLearner(
  url: string,
  peerUrl: string,
): Promise<{ added: EtcdMember; members: EtcdMember[] }> {
  const result = await gateway<{ member?: EtcdMember; members?: EtcdMember[] }>(url, 'add', {
    peerURLs: [peerUrl],
    isLearner: true,
  });
  if (!result.member) throw new SimError('etcd member add answered no member', 'EtcdRequestFailed', {});
  return { added: result.member, members: result.members ?? [] };
}

/** Promotes a learner; etcd refuses until it has caught up with the leader (the caller retries). */
export async function promoteMember(url: string, id: string): Promise<void> {
  await gateway(url, 'promote', { ID: id });
}

export async function removeMember(url: string, id: string): Promise<void> {
  await gateway(url, 'remove', { ID: id });
}
