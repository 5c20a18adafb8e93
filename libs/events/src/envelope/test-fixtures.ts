import { type EventDataOf } from './catalogue.js';

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
