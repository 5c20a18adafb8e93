import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { loadManifestFile, type Manifest } from '@capstan/manifests';
import { createCertificateAuthority, issueServerCertificate } from '@capstan/pki';
import { TestEnvironmentError } from './errors.js';
import { freePort, isPortFree, retryWhilePortTaken } from './ports.js';
import { sleep, startProcess, stopPid, waitUntilReady, type ManagedProcess } from './processes.js';
import type { UpstreamClusterApi, UpstreamCommand } from './upstream-cluster-api.js';

/** Upstream's controller managers (every command but clusterctl). */
export type UpstreamManager = Exclude<UpstreamCommand, 'clusterctl'>;

/** Each manager's CRD kustomization in upstream's sources (`config/crd`). */
function crdKustomizationDir(upstream: UpstreamClusterApi, manager: UpstreamManager): string {
  switch (manager) {
    case 'core':
      return join(upstream.sourceDir, 'core', 'config', 'crd');
    case 'kubeadm-bootstrap':
      return join(upstream.sourceDir, 'bootstrap', 'kubeadm', 'config', 'crd');
    case 'kubeadm-control-plane':
      return join(upstream.sourceDir, 'controlplane', 'kubeadm', 'config', 'crd');
    case 'docker':
      return join(upstream.testSourceDir, 'infrastructure', 'docker', 'config', 'crd');
  }
}

interface CrdKustomization {
  resources?: string[];
  labels?: { pairs?: Record<string, string> }[];
}

/**
 * The CRDs of the given upstream managers as upstream's release ships them: the kustomization's resources with its
 * labels (the providers' contract labels, `cluster.x-k8s.io/v1beta2: v1beta2`, which a core needs to use their
 * kinds). The webhook and CA injection patches are left out: nothing serves those webhooks here.
 */
export function upstreamCrds(upstream: UpstreamClusterApi, managers: readonly UpstreamManager[]): Manifest[] {
  return managers.flatMap((manager) => {
    const dir = crdKustomizationDir(upstream, manager);
    const kustomization = (parse(readFileSync(join(dir, 'kustomization.yaml'), 'utf8')) ?? {}) as CrdKustomization;
    const labels = Object.assign({}, ...(kustomization.labels ?? []).map((entry) => entry.pairs ?? {})) as Record<string, string>;
    return (kustomization.resources ?? [])
      .flatMap((resource) => loadManifestFile(join(dir, resource)))
      .map((crd) => ({ ...crd, metadata: { ...crd.metadata, labels: { ...crd.metadata.labels, ...labels } } }));
  });
}

/** An upstream manager's process and where it serves its Prometheus metrics (`--insecure-diagnostics`: plain HTTP). */
export interface UpstreamManagerProcess extends ManagedProcess {
  metricsUrl: string;
}

export interface StartUpstreamManagersOptions {
  upstream: UpstreamClusterApi;
  kubeconfigPath: string;
  /** Certificates and logs go here (`<manager>.log`). */
  workDir: string;
  managers: readonly UpstreamManager[];
  /** Extra flags per manager, e.g. `{ core: ['--sync-period=1m'] }`. */
  extraArgs?: Partial<Record<UpstreamManager, string[]>>;
  /** How long to wait for every manager's health endpoint to answer /readyz (default 60 s). */
  readyTimeoutMs?: number;
  /** How long to wait for another in-memory backend on this host to let go of its fixed port (default 20 min). */
  inMemoryPortWaitMs?: number;
}

/**
 * Upstream's managers as real processes against an API server, without leader election. Their webhook servers get
 * a loopback certificate because they refuse to start without one; no API server calls them (upstream's CRD bases
 * carry no webhook configuration), so defaulting that upstream does in webhooks is up to the manifests. The docker
 * provider's in-memory backend serves the workload clusters' API servers on loopback ports (POD_IP): on fixed ports
 * (19000 for its debug server, 20000 and up for the clusters), so only one runs on a host at a time.
 */
export async function startUpstreamManagers(options: StartUpstreamManagersOptions): Promise<UpstreamManagerProcess[]> {
  // A port chosen free can be taken before the manager binds it (its webhook server listens on every interface, the
  // check looks at loopback): start them all again on other ports.
  return retryWhilePortTaken(
    () => startManagersOnce(options),
    (error) => error instanceof TestEnvironmentError && /address already in use/.test(error.message),
  );
}

async function startManagersOnce(options: StartUpstreamManagersOptions): Promise<UpstreamManagerProcess[]> {
  const certDir = join(options.workDir, 'upstream-webhook-certs');
  mkdirSync(certDir, { recursive: true });
  const ca = await createCertificateAuthority({ commonName: 'upstream-webhook-ca' });
  const serving = await issueServerCertificate(ca, { commonName: 'localhost', ipAddresses: ['127.0.0.1'] });
  writeFileSync(join(certDir, 'tls.crt'), serving.certPem);
  writeFileSync(join(certDir, 'tls.key'), serving.keyPem, { mode: 0o600 });
  if (options.managers.includes('docker')) await waitForInMemoryPorts(options.inMemoryPortWaitMs ?? 20 * 60_000);
  const started: UpstreamManagerProcess[] = [];
  const healthUrls: string[] = [];
  for (const manager of options.managers) {
    const [webhookPort, healthPort, diagnosticsPort] = [await freePort(), await freePort(), await freePort()];
    started.push({
      ...startProcess({
        name: `upstream-${manager}`,
        command: options.upstream.binaries[manager],
        args: [
          `--kubeconfig=${options.kubeconfigPath}`,
          `--webhook-cert-dir=${certDir}`,
          `--webhook-port=${webhookPort}`,
          `--health-addr=127.0.0.1:${healthPort}`,
          `--diagnostics-address=127.0.0.1:${diagnosticsPort}`,
          '--insecure-diagnostics',
          '--leader-elect=false',
          ...(options.extraArgs?.[manager] ?? []),
        ],
        logFile: join(options.workDir, `upstream-${manager}.log`),
        env: manager === 'docker' ? { POD_IP: '127.0.0.1' } : {},
      }),
      metricsUrl: `http://127.0.0.1:${diagnosticsPort}/metrics`,
    });
    healthUrls.push(`http://127.0.0.1:${healthPort}/readyz`);
  }
  // A manager that cannot start (the in-memory backend's fixed ports taken) fails here, with its log, not as a
  // cluster that never provisions.
  const readyTimeoutMs = options.readyTimeoutMs ?? 60_000;
  try {
    await Promise.all(
      started.map((manager, i) =>
        waitUntilReady(
          manager,
          manager.name,
          async () => (await fetch(healthUrls[i]!, { signal: AbortSignal.timeout(1_000) })).ok,
          readyTimeoutMs,
        ),
      ),
    );
  } catch (error) {
    await stopUpstreamManagers(started);
    throw error;
  }
  return started;
}

/** The in-memory backend's debug server port, fixed in v1.14 (`DefaultDebugPort`); its clusters take 20000 and up. */
const IN_MEMORY_DEBUG_PORT = 19000;

/** Waits while another docker provider (another suite or a benchmark on this host) holds the in-memory ports. */
async function waitForInMemoryPorts(timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await isPortFree(IN_MEMORY_DEBUG_PORT))) {
    if (Date.now() > deadline) {
      throw new TestEnvironmentError(
        `port ${IN_MEMORY_DEBUG_PORT} is still taken after ${timeoutMs / 1000} s: another in-memory backend runs on this host`,
        { port: IN_MEMORY_DEBUG_PORT },
      );
    }
    await sleep(2_000);
  }
}

export async function stopUpstreamManagers(managers: readonly ManagedProcess[]): Promise<void> {
  await Promise.all(managers.map((manager) => stopPid(manager.pid)));
}
