import { createTestNamespace, type TestNamespace } from '@capstan/testing';
import { KubeClient, type KubeClientOptions } from '../client.js';
import { ensureWidgetCrd } from './widget-crd.js';

export interface WidgetNamespace {
  ns: TestNamespace;
  client: KubeClient;
}

/** For one test file: its own namespace, a client of the shared test API server, and the Widget CRD. */
export function useWidgetNamespace(prefix: string, options: KubeClientOptions = {}): WidgetNamespace {
  const env = {} as WidgetNamespace;
  beforeAll(async () => {
    env.ns = await createTestNamespace(prefix);
    env.client = new KubeClient(env.ns.kc, { fieldManager: 'runtime-test', ...options });
    await ensureWidgetCrd(env.client);
  });
  afterAll(async () => {
    await env.ns?.delete();
    await env.client?.close();
  });
  return env;
}
