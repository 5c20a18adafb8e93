import { testNatsUrl } from '@capstan/testing';
import { defaultServiceOptions, type ServiceOptions } from '../service-options.js';

/**
 * A service's options against the test environment: its kubeconfig and NATS, any free local port, one namespace
 * and event topology of the test file's own, no log output. `overrides` says what a test changes.
 */
export function testServiceOptions(
  service: string,
  scope: { namespace: string; topology: { root: string; stream: string } },
  overrides: Partial<ServiceOptions> = {},
): ServiceOptions {
  return {
    ...defaultServiceOptions(service, {}),
    kubeconfig: process.env['CAPSTAN_TEST_KUBECONFIG']!,
    natsUrl: testNatsUrl(),
    httpHost: '127.0.0.1',
    httpPort: 0,
    adminPort: 0,
    namespace: scope.namespace,
    subjectRoot: scope.topology.root,
    streamName: scope.topology.stream,
    logLevel: 'silent',
    ...overrides,
  };
}
