import { createHash } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { issueClientCertificate, loadCertificateAuthority, renderKubeconfig } from '@capstan/pki';
import type { ApiServerIdentity } from './api-server-certificates.js';
import { SimError } from './errors.js';
import { OwnedProcess, stopRecordedProcess } from './owned-process.js';

/** The two control plane components a K3s server runs next to its API server, as the sim runs them. */
export const WORKLOAD_CONTROLLERS = ['kube-controller-manager', 'kube-scheduler'] as const;
export type WorkloadController = (typeof WORKLOAD_CONTROLLERS)[number];

/** The identities K3s gives them: the bootstrap RBAC roles of these users grant exactly what each needs. */
const CONTROLLER_USERS: Readonly<Record<WorkloadController, string>> = {
  'kube-controller-manager': 'system:kube-controller-manager',
  'kube-scheduler': 'system:kube-scheduler',
};

export interface WorkloadControllersInput {
  /** The cluster's folder in the sim state dir (the API server's files are there too). */
  dir: string;
  clusterName: string;
  /** The URL the components reach the cluster's API server at. */
  apiServerUrl: string;
  identity: ApiServerIdentity;
  binaries: Readonly<Record<WorkloadController, string>>;
  /** The components' environment (GOMEMLIMIT). */
  env?: NodeJS.ProcessEnv;
}

/**
 * kube-controller-manager flags as a K3s server sets them where they matter to workloads: per-controller service
 * account credentials, node CIDRs from the cluster CIDR (pod IPs come from them), the service account signing key
 * and root CA. No HTTPS port (nothing scrapes it) and no leader election (one instance per cluster).
 */
export function controllerManagerArgs(input: {
  kubeconfig: string;
  clusterName: string;
  clusterCIDR: string;
  serviceCIDR: string;
  serviceAccountKey: string;
  rootCA: string;
}): string[] {
  return [
    `--kubeconfig=${input.kubeconfig}`,
    '--use-service-account-credentials=true',
    `--service-account-private-key-file=${input.serviceAccountKey}`,
    `--root-ca-file=${input.rootCA}`,
    `--cluster-name=${input.clusterName}`,
    '--allocate-node-cidrs=true',
    `--cluster-cidr=${input.clusterCIDR}`,
    `--service-cluster-ip-range=${input.serviceCIDR}`,
    '--leader-elect=false',
    '--secure-port=0',
    '--profiling=false',
    '--v=0',
  ];
}

export function schedulerArgs(input: { kubeconfig: string }): string[] {
  return [`--kubeconfig=${input.kubeconfig}`, '--leader-elect=false', '--secure-port=0', '--profiling=false', '--v=0'];
}

/** Where each component's kubeconfig (a client certificate from the cluster's client CA) is written. */
function kubeconfigPath(dir: string, component: WorkloadController): string {
  return join(dir, `${component}.kubeconfig`);
}

/**
 * Writes the components' kubeconfigs, issuing their client certificates from the cluster's client CA as K3s does
 * on start; kept when written for the same identity and URL. Returns a digest of what was written.
 */
async function writeControllerFiles(input: WorkloadControllersInput): Promise<string> {
  const digest = createHash('sha256')
    .update(JSON.stringify([input.identity, input.apiServerUrl]))
    .digest('hex');
  const digestFile = join(input.dir, 'controllers.sha256');
  const rootCA = join(input.dir, 'server-ca.crt');
  const files = [...WORKLOAD_CONTROLLERS.map((c) => kubeconfigPath(input.dir, c)), rootCA];
  if (
    existsSync(digestFile) &&
    readFileSync(digestFile, 'utf8') === digest &&
    files.every((path) => existsSync(path))
  ) {
    return digest;
  }
  let clientCA;
  try {
    clientCA = await loadCertificateAuthority(input.identity.tls.clientCA, 'client CA');
  } catch (error) {
    throw new SimError(
      `the bootstrap data's client CA is unusable: ${(error as Error).message}`,
      'InvalidServerTls',
    );
  }
  const write = (path: string, content: string) => writeFileSync(path, content, { mode: 0o600 });
  for (const component of WORKLOAD_CONTROLLERS) {
    const client = await issueClientCertificate(clientCA, { commonName: CONTROLLER_USERS[component] });
    write(
      kubeconfigPath(input.dir, component),
      renderKubeconfig({
        clusterName: input.clusterName,
        server: input.apiServerUrl,
        caPem: input.identity.tls.serverCA.certPem,
        clientCertPem: client.certPem,
        clientKeyPem: client.keyPem,
      }),
    );
  }
  write(rootCA, input.identity.tls.serverCA.certPem);
  write(digestFile, digest);
  return digest;
}

/**
 * The kube-controller-manager and kube-scheduler of one dedicated workload cluster: real controllers (ReplicaSets,
 * Deployments, DaemonSets, Jobs, disruption budgets, node lifecycle and IPAM, garbage collection) and the real
 * scheduler, so workloads behave as on K3s. Processes are recorded in pid files next to the API server's, so a
 * provider killed without stopping them adopts them on its next start.
 */
export class WorkloadControllers {
  private readonly processes = new Map<WorkloadController, OwnedProcess>();

  constructor(private readonly input: WorkloadControllersInput) {}

  /** Starts (or adopts) the components that are not running; `onExit` hears of one that exits on its own. */
  async start(onExit: (component: WorkloadController) => void): Promise<void> {
    const { dir, identity } = this.input;
    const digest = await writeControllerFiles(this.input);
    const args: Record<WorkloadController, string[]> = {
      'kube-controller-manager': controllerManagerArgs({
        kubeconfig: kubeconfigPath(dir, 'kube-controller-manager'),
        clusterName: this.input.clusterName,
        clusterCIDR: identity.clusterCIDR,
        serviceCIDR: identity.serviceCIDR,
        serviceAccountKey: join(dir, 'service.key'),
        rootCA: join(dir, 'server-ca.crt'),
      }),
      'kube-scheduler': schedulerArgs({ kubeconfig: kubeconfigPath(dir, 'kube-scheduler') }),
    };
    for (const component of WORKLOAD_CONTROLLERS) {
      const existing = this.processes.get(component);
      if (existing?.alive()) continue;
      const process =
        existing ??
        new OwnedProcess({
          name: component,
          dir,
          command: this.input.binaries[component],
          args: args[component],
          env: this.input.env,
          inputs: [digest],
        });
      this.processes.set(component, process);
      if ((await process.start()) === 'started') {
        void process.exited?.then(() => {
          if (this.processes.get(component) === process) onExit(component);
        });
      }
    }
  }

  /** Whether every component runs. */
  alive(): boolean {
    return WORKLOAD_CONTROLLERS.every((component) => this.processes.get(component)?.alive() === true);
  }

  async stop(graceMs?: number): Promise<void> {
    const running = [...this.processes.values()];
    this.processes.clear();
    await Promise.all(running.map((process) => process.stop(graceMs)));
    // Components an earlier provider started and this one never adopted.
    await Promise.all(WORKLOAD_CONTROLLERS.map((component) => stopRecordedProcess(this.input.dir, component)));
  }

  /** This provider lets go of them; they keep running for the replica that adopts the cluster. */
  detach(): void {
    this.processes.clear();
  }
}
