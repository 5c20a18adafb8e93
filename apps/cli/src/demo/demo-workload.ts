import { AppsV1Api, CoreV1Api, KubeConfig, type V1Pod } from '@kubernetes/client-node';
import { cell, creationAge, renderTable } from '../tables/table.js';

/** The demo's workload: what `kubectl create deployment web --image=nginx --replicas=3` creates. */
export const DEMO_DEPLOYMENT = { name: 'web', image: 'nginx:1.27', replicas: 3 } as const;

/** The table `kubectl get pods -o wide` prints: NAME READY STATUS RESTARTS AGE IP NODE. */
export function podsTable(pods: V1Pod[], now = new Date()): string {
  const rows = [...pods]
    .sort((a, b) => (a.metadata?.name ?? '').localeCompare(b.metadata?.name ?? ''))
    .map((pod) => {
      const statuses = pod.status?.containerStatuses ?? [];
      const ready = statuses.filter((s) => s.ready).length;
      const waiting = statuses.find((s) => s.state?.waiting)?.state?.waiting?.reason;
      const status = pod.metadata?.deletionTimestamp ? 'Terminating' : (waiting ?? pod.status?.phase ?? 'Unknown');
      return [
        pod.metadata?.name ?? '',
        `${ready}/${pod.spec?.containers.length ?? 0}`,
        status,
        String(statuses.reduce((sum, s) => sum + s.restartCount, 0)),
        creationAge(pod.metadata?.creationTimestamp, now),
        cell(pod.status?.podIP),
        cell(pod.spec?.nodeName),
      ];
    });
  return renderTable(['NAME', 'READY', 'STATUS', 'RESTARTS', 'AGE', 'IP', 'NODE'], rows);
}

/**
 * Runs the demo Deployment on the workload cluster and waits until its pods are Running and Ready (scheduled by the
 * cluster's kube-scheduler, run by the sim nodes). Returns the pods.
 */
export async function runDemoWorkload(
  kubeconfig: string,
  options: { timeoutMs: number; signal: AbortSignal },
): Promise<V1Pod[]> {
  const kc = new KubeConfig();
  kc.loadFromString(kubeconfig);
  const apps = kc.makeApiClient(AppsV1Api);
  const core = kc.makeApiClient(CoreV1Api);
  const { name, image, replicas } = DEMO_DEPLOYMENT;
  await apps.createNamespacedDeployment({
    namespace: 'default',
    body: {
      metadata: { name, labels: { app: name } },
      spec: {
        replicas,
        selector: { matchLabels: { app: name } },
        template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'nginx', image }] } },
      },
    },
  });
  const deadline = Date.now() + options.timeoutMs;
  for (;;) {
    const pods = (await core.listNamespacedPod({ namespace: 'default', labelSelector: `app=${name}` })).items;
    const running = pods.filter(
      (p) => p.status?.phase === 'Running' && p.status.containerStatuses?.every((s) => s.ready) && !p.metadata?.deletionTimestamp,
    );
    if (running.length === replicas) return running;
    if (Date.now() > deadline || options.signal.aborted) {
      throw new Error(
        `Deployment ${name}: ${running.length}/${replicas} pods Running and Ready after ${options.timeoutMs / 1000}s`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}
