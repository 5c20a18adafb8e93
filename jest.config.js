// Two projects: `unit` needs no servers; `integration` runs against the real kube-apiserver, etcd and
// NATS JetStream that libs/testing starts once per run (globalSetup) and stops afterwards (globalTeardown).
const swc = [
  '@swc/jest',
  {
    jsc: {
      target: 'es2023',
      parser: { syntax: 'typescript', decorators: true },
      transform: { legacyDecorator: true, decoratorMetadata: true, useDefineForClassFields: false },
      keepClassNames: true,
    },
    module: { type: 'es6' },
  },
];

const shared = {
  extensionsToTreatAsEsm: ['.ts'],
  transform: { '^.+\\.ts$': swc },
  moduleNameMapper: {
    '^@capstan/core/service$': '<rootDir>/apps/core/src/core-service.ts',
    '^@capstan/cluster-provider/service$': '<rootDir>/apps/cluster-provider/src/service.ts',
    '^@capstan/machine-provider/service$': '<rootDir>/apps/machine-provider/src/service.ts',
    '^@capstan/bootstrap-provider/service$': '<rootDir>/apps/bootstrap-provider/src/bootstrap-service.ts',
    '^@capstan/control-plane-provider/service$': '<rootDir>/apps/control-plane-provider/src/control-plane-service.ts',
    '^@capstan/testing/local-host$': '<rootDir>/libs/testing/src/local-host.ts',
    '^@capstan/kube/testing$': '<rootDir>/libs/kube/src/testing/in-memory/index.ts',
    '^@capstan/([a-z0-9-]+)$': '<rootDir>/libs/$1/src/index.ts',
    '^(\\.{1,2}/.*)\\.js$': '$1',
  },
  testEnvironment: 'node',
  roots: ['<rootDir>/libs', '<rootDir>/apps'],
};

export default {
  testTimeout: 120000,
  // Run test files in a worker that is replaced once it holds more than this after a file: every file loads its
  // own module graph (ESM vm modules), which the process never gives back, so one long-lived process grew to
  // several GB over the suite. (With one core to spare Jest would otherwise run everything in its own process.)
  workerIdleMemoryLimit: '1.5GB',
  projects: [
    {
      ...shared,
      displayName: 'unit',
      testMatch: ['**/*.spec.ts'],
      testPathIgnorePatterns: ['/node_modules/', '/dist/', '\\.int\\.spec\\.ts$', '\\.upstream\\.spec\\.ts$'],
    },
    {
      ...shared,
      displayName: 'integration',
      testMatch: ['**/*.int.spec.ts'],
      testPathIgnorePatterns: ['/node_modules/', '/dist/'],
      globalSetup: '<rootDir>/libs/testing/jest/global-setup.mjs',
      globalTeardown: '<rootDir>/libs/testing/jest/global-teardown.mjs',
    },
    {
      // `npm run test:upstream`: upstream Cluster API's binaries against Capstan (docs/compatibility.md).
      ...shared,
      displayName: 'upstream',
      testMatch: ['**/*.upstream.spec.ts'],
      testPathIgnorePatterns: ['/node_modules/', '/dist/'],
      globalSetup: '<rootDir>/libs/testing/jest/global-setup.mjs',
      globalTeardown: '<rootDir>/libs/testing/jest/global-teardown.mjs',
    },
  ],
};
