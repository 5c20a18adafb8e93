// What the running command talks to. A failure deep in a client library ("fetch failed") says neither the
// URL nor where it came from; the command records its targets here as it resolves them, and run() turns
// any error into one line that names them (explain-error.ts).
import { type NatsTarget, type Origin } from '../runtime/local-env.js';

export interface KubeTarget {
  /** The API server URL of the kubeconfig's current context. */
  server: string;
  /** The kubeconfig file, or `in-cluster` for the service account. */
  kubeconfig: string;
  origin: Origin;
}

export interface NatsContext extends NatsTarget {
  /** The JetStream stream the command reads, for "stream not found". */
  stream?: string;
}

export interface FailureContext {
  kube?: KubeTarget;
  nats?: NatsContext;
}

let current: FailureContext = {};

export function recordKubeTarget(target: KubeTarget): void {
  current = { ...current, kube: target };
}

export function recordNatsTarget(target: NatsContext): void {
  current = { ...current, nats: target };
}

export function failureContext(): FailureContext {
  return current;
}

/** Each run() starts clean: tests call it many times in one process. */
export function resetFailureContext(): void {
  current = {};
}
