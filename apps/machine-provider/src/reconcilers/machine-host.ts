import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { SimMachine } from '@capstan/api';
import { BOOTSTRAP_SENTINEL_PATH, BootstrapDataError, type ParsedK3sBootstrap } from '@capstan/k3s-bootstrap';
import {
  clusterApiSpecFrom,
  clusterKeyOf,
  isSimError,
  nodeIdentityFrom,
  serverEndpointOf,
  SimConditionReason,
  type ClusterApi,
  type NodeAgent,
  type SimClusterRef,
  type SimRuntime,
} from '@capstan/sim';

/** One simulated host: a SimMachine running its parsed bootstrap data. */
export interface MachineHost {
  machine: SimMachine;
  providerID: string;
  cluster: SimClusterRef;
  parsed: ParsedK3sBootstrap;
}

export type ServerOutcome =
  | { ok: true; api: ClusterApi }
  | { ok: false; reason: string; message: string; retryMs?: number; invalidData?: boolean };

const WAIT_FOR_FIRST_SERVER_MS = 3_000;
const RETRY_START_MS = 10_000;
const RETRY_REJECTED_MS = 60_000;

export function isServerRole(parsed: ParsedK3sBootstrap): boolean {
  return parsed.role !== 'agent';
}

/**
 * A server machine brings its cluster's API up, as `k3s server` does: the first server starts it (`fresh`:
 * whatever a cluster of the same name left is wiped), later ones join the running one, which refuses them
 * when their CA material or token differ. A joining server whose cluster serves nothing yet waits (when
 * no server of the cluster is provisioned), like K3s retrying its join.
 */
export async function bringUpServer(
  runtime: SimRuntime,
  host: MachineHost,
  options: { firstBoot: boolean; otherServersProvisioned: boolean },
): Promise<ServerOutcome> {
  const key = clusterKeyOf(host.cluster.namespace, host.cluster.clusterName);
  const running = runtime.clusterApi(key);
  if (
    options.firstBoot &&
    host.parsed.role === 'join-server' &&
    !running &&
    !options.otherServersProvisioned
  ) {
    return {
      ok: false,
      reason: SimConditionReason.WaitingForControlPlane,
      message: `waiting for the cluster's first server to serve https://${host.cluster.endpoint.host}:${host.cluster.endpoint.port}`,
      retryMs: WAIT_FOR_FIRST_SERVER_MS,
    };
  }
  let spec;
  try {
    spec = clusterApiSpecFrom(host.parsed, host.cluster);
  } catch (error) {
    if (error instanceof BootstrapDataError) {
      return {
        ok: false,
        reason: SimConditionReason.BootstrapDataInvalid,
        message: error.message,
        invalidData: true,
      };
    }
    throw error;
  }
  const fresh =
    options.firstBoot && host.parsed.role === 'init-server' && !running && !options.otherServersProvisioned;
  try {
    const { api } = await runtime.ensureClusterApi(spec, { fresh });
    return { ok: true, api };
  } catch (error) {
    if (isSimError(error, 'JoinRejected')) {
      return {
        ok: false,
        reason: SimConditionReason.JoinRejected,
        message: error.message,
        retryMs: RETRY_REJECTED_MS,
      };
    }
    if (isSimError(error, 'InvalidServerTls') || isSimError(error, 'InvalidToken')) {
      return {
        ok: false,
        reason: SimConditionReason.BootstrapDataInvalid,
        message: error.message,
        invalidData: true,
      };
    }
    if (isSimError(error)) {
      return {
        ok: false,
        reason: SimConditionReason.APIServerNotReady,
        message: error.message,
        retryMs: RETRY_START_MS,
      };
    }
    throw error;
  }
}

/** Starts (or finds) the machine's simulated kubelet. */
export function startNode(
  runtime: SimRuntime,
  host: MachineHost,
  options: { deletedByFault: boolean; onChange: () => void },
): NodeAgent {
  const { machine } = host;
  const key = `${machine.metadata!.namespace}/${machine.metadata!.name}`;
  return runtime.ensureNodeAgent(key, {
    identity: nodeIdentityFrom(host.parsed, {
      namespace: machine.metadata!.namespace!,
      name: machine.metadata!.name!,
      uid: machine.metadata!.uid!,
      providerID: host.providerID,
    }),
    faults: {
      notReadyAfterSeconds: machine.spec?.nodeNotReadyAfterSeconds,
      disappearsAfterSeconds: machine.spec?.nodeDisappearsAfterSeconds,
    },
    deletedByFault: options.deletedByFault,
    serverEndpoint: serverEndpointOf(host.parsed, host.cluster),
    token: host.parsed.token,
    onChange: options.onChange,
  });
}

/** The bootstrap sentinel, written below the machine's own folder of the state dir, never on the host. */
export function writeSentinel(runtime: SimRuntime, namespace: string, name: string): string {
  const path = join(runtime.stateDir.machineDir(namespace, name), BOOTSTRAP_SENTINEL_PATH);
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  writeFileSync(path, '');
  return path;
}
