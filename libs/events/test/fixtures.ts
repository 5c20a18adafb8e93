import { type EventDataOf } from '../src/envelope/catalogue.js';

/** A valid `bootstrap.data-secret-created` data object, overridable per test. */
export function dataSecretCreated(
  overrides: Partial<EventDataOf<'bootstrap.data-secret-created'>> = {},
): EventDataOf<'bootstrap.data-secret-created'> {
  return {
    object: {
      apiGroup: 'bootstrap.capstan.dev',
      kind: 'K3sConfig',
      namespace: 'default',
      name: 'demo-md-0-x7k2p',
      uid: '6f1c1b7e-3b0e-4a53-9d2e-1a2b3c4d5e6f',
    },
    generation: 1,
    resourceVersion: '4711',
    clusterName: 'demo',
    dataSecretName: 'demo-md-0-x7k2p',
    machineName: 'demo-md-0-abcde',
    ...overrides,
  };
}

let counter = 0;

/** Distinct objects (uid, name, resourceVersion) so every event gets its own message id. */
export function distinctDataSecretCreated(index = counter++): EventDataOf<'bootstrap.data-secret-created'> {
  return dataSecretCreated({
    object: {
      apiGroup: 'bootstrap.capstan.dev',
      kind: 'K3sConfig',
      namespace: 'default',
      name: `demo-${index}`,
      uid: `00000000-0000-4000-8000-${index.toString(16).padStart(12, '0')}`,
    },
    resourceVersion: String(1000 + index),
  });
}

/** Polls until `check` returns a value other than undefined/false, or fails after `timeoutMs`. */
export async function eventually<T>(
  check: () => T | undefined | false | Promise<T | undefined | false>,
  what: string,
  timeoutMs = 20_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}
