import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { SimMachine } from '@capstan/api';
import { BOOTSTRAP_SENTINEL_PATH, BootstrapDataError, type ParsedFile, type ParsedK3sBootstrap } from '@capstan/k3s-bootstrap';
import { pinnedKubeApiserverVersions, resolveKubeApiserverVersion } from '@capstan/testing/local-host';
import {
  acknowledgeInstall,
  answerK3sRequest,
  clusterApiSpecFrom,
  clusterKeyOf,
  isSimError,
  issueLeafCertificates,
  kubeApiserverArgsOf,
  nodeIdentityFrom,
  nodeNameOf,
  readInstalledK3s,
  readMachineK3sConfig,
  writeMachineFiles,
  writeSimInstaller,
  writeSimK3sBinary,
  serverEndpointOf,
  servingNamesOf,
  SimConditionReason,
  type ClusterApi,
  type InstalledServer,
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
  options: {
    firstBoot: boolean;
    otherServersProvisioned: boolean;
    /** The cluster's other server machines, staying: the API server starts on the newest install among them all. */
    otherServers: readonly SimMachine[];
  },
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
    const installed = newestInstalledServer(runtime, host, options.otherServers);
    spec = { ...clusterApiSpecFrom(host.parsed, host.cluster), ...(installed && { installed }) };
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
    const member = nodeNameOf(host.parsed, host.machine.metadata!.name!);
    const { api } = await runtime.ensureClusterApi(spec, { fresh, member });
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
    }, host.cluster),
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

/**
 * The host runs its bootstrap data: every file below the machine's own directory (its filesystem root), the sim's
 * stand-in for K3s's install.sh where the data and later plans run it, and for servers the client certificate K3s
 * makes itself (`client-kube-apiserver`, what plan probes of the API server present); then the node agent starts
 * when the data starts one. Files are written once per boot; the agent is started again (or adopted) whenever it is
 * not running.
 */
export async function runHost(
  runtime: SimRuntime,
  host: MachineHost & { parsed: { files?: ParsedFile[] } },
  options: { firstBoot: boolean; onInstall: () => void },
): Promise<void> {
  const { machine, parsed } = host;
  const namespace = machine.metadata!.namespace!;
  const name = machine.metadata!.name!;
  const root = runtime.stateDir.machineDir(namespace, name);
  if (options.firstBoot && parsed.files) {
    writeMachineFiles(root, parsed.files);
    writeSimInstaller(root, parsed.installScriptPath, { version: parsed.version, exec: isServerRole(parsed) ? 'server' : 'agent' }, availableMinors());
    if (isServerRole(parsed)) {
      // K3s issues a new server's leaf certificates at its first start (client-kube-apiserver is what plan probes
      // of the API server present).
      await issueLeafCertificates(root, {
        servingNames: servingNamesOf(parsed, host.cluster),
        issuedDaysAgo: runtime.certificateAgeDays,
      });
      writeSimK3sBinary(root);
    }
  }
  if (!parsed.startsNodeAgent) return;
  const key = `${namespace}/${name}`;
  runtime.machineAgents.watchInstalls(key, root, options.onInstall);
  if (isServerRole(parsed)) {
    const clusterKey = clusterKeyOf(host.cluster.namespace, host.cluster.clusterName);
    const nodeName = nodeNameOf(parsed, name);
    runtime.machineAgents.watchK3sRequests(key, root, () =>
      answerK3sRequest({
        root,
        recordsDir: runtime.stateDir.machineRecordsDir(namespace, name),
        nodeName,
        server: true,
        // The server's own etcd member: K3s snapshots and resets the member it runs.
        saveSnapshot: (file) => runtime.saveEtcdSnapshot(clusterKey, file, nodeName),
        restoreSnapshot: (file) => runtime.restoreEtcdSnapshot(clusterKey, file, nodeName),
        servingNames: servingNamesOf(parsed, host.cluster),
        renewServingCertificate: () => runtime.renewServingCertificate(clusterKey),
        secretsEncrypt: (command) => runtime.secretsEncrypt(clusterKey, command),
      }),
    );
  }
  await runtime.machineAgents.ensure(key, root, runtime.stateDir.machineRecordsDir(namespace, name));
}

/** The Kubernetes minors of the pinned kube-apiservers: the K3s releases the sim can install. */
function availableMinors(): string[] {
  return pinnedKubeApiserverVersions().map(({ version }) => version.replace(/^v(\d+\.\d+)\..*$/, '$1'));
}

/**
 * What the machine installed last (a plan may have run install.sh again): the node reports that release, and a
 * server's cluster API server runs that minor's kube-apiserver with the machine's `kube-apiserver-arg`.
 */
export async function applyInstalled(runtime: SimRuntime, host: MachineHost): Promise<{ version: string; restarted: boolean } | undefined> {
  const { machine, parsed } = host;
  const installed = readInstalledK3s(machineRoot(runtime, host));
  if (!installed) return undefined;
  runtime.nodeAgent(`${machine.metadata!.namespace}/${machine.metadata!.name}`)?.reinstalled(installed.version);
  let server: InstalledServer | undefined;
  try {
    server = isServerRole(parsed) ? installedServerOf(runtime, machine) : undefined;
  } catch (error) {
    // A refused kube-apiserver flag: the server keeps running as it was, the install is not acknowledged (its
    // install.sh, and so the plan, fails on its timeout), and bringing the server up reports the refusal.
    if (error instanceof BootstrapDataError) return undefined;
    throw error;
  }
  const { restarted } = server
    ? await runtime.reinstallClusterApi(clusterKeyOf(host.cluster.namespace, host.cluster.clusterName), server)
    : { restarted: false };
  if (installed.at !== 'boot') acknowledgeInstall(machineRoot(runtime, host), installed.at);
  return { version: installed.version, restarted };
}

/**
 * What a server machine installed after its bootstrap (a plan ran install.sh): that minor's kube-apiserver and the
 * `kube-apiserver-arg` of its K3s config at that time. Undefined while it runs what the bootstrap data installed.
 */
export function installedServerOf(runtime: SimRuntime, machine: SimMachine): InstalledServer | undefined {
  const root = runtime.stateDir.machineDir(machine.metadata!.namespace!, machine.metadata!.name!);
  const installed = readInstalledK3s(root);
  if (!installed || installed.at === 'boot') return undefined;
  const binary = resolveKubeApiserverVersion(installed.version);
  if (!binary) return undefined;
  return {
    version: installed.version,
    kubeApiserver: binary.path,
    extraArgs: kubeApiserverArgsOf(readMachineK3sConfig(root)),
    installedAt: installed.at,
  };
}

/**
 * The install a cluster's API server starts on: the newest of its server machines' (the one API server stands in for
 * them all and runs the newest, see reinstallClusterApi). Started on this machine's alone, a restarted provider would
 * bring it up on whichever server it reconciled first and restart it once for each newer install it then met. Another
 * server's refused configuration is passed over here (its own reconcile reports it); this machine's is thrown.
 */
export function newestInstalledServer(
  runtime: SimRuntime,
  host: MachineHost,
  otherServers: readonly SimMachine[],
): InstalledServer | undefined {
  let newest = installedServerOf(runtime, host.machine);
  for (const other of otherServers) {
    let installed: InstalledServer | undefined;
    try {
      installed = installedServerOf(runtime, other);
    } catch (error) {
      if (error instanceof BootstrapDataError) continue;
      throw error;
    }
    if (installed && (!newest || Date.parse(installed.installedAt) > Date.parse(newest.installedAt))) newest = installed;
  }
  return newest;
}

function machineRoot(runtime: SimRuntime, host: MachineHost): string {
  return runtime.stateDir.machineDir(host.machine.metadata!.namespace!, host.machine.metadata!.name!);
}

/** The bootstrap sentinel, written below the machine's own folder of the state dir, never on the host. */
export function writeSentinel(runtime: SimRuntime, namespace: string, name: string): string {
  const path = join(runtime.stateDir.machineDir(namespace, name), BOOTSTRAP_SENTINEL_PATH);
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  writeFileSync(path, '');
  return path;
}
