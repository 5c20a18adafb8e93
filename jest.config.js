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
    '^@capstan/([a-z0-9-]+)$': '<rootDir>/libs/$1/src/index.ts',
    '^(\\.{1,2}/.*)\\.js$': '$1',
  },
  testEnvironment: 'node',
  roots: ['<rootDir>/libs', '<rootDir>/apps'],
};

export default {
  testTimeout: 120000,
  projects: [
    {
      ...shared,
      displayName: 'unit',
      testMatch: ['**/*.spec.ts'],
      testPathIgnorePatterns: ['/node_modules/', '/dist/', '\\.int\\.spec\\.ts$'],
    },
    {
      ...shared,
      displayName: 'integration',
      testMatch: ['**/*.int.spec.ts'],
      testPathIgnorePatterns: ['/node_modules/', '/dist/'],
      globalSetup: '<rootDir>/libs/testing/jest/global-setup.mjs',
      globalTeardown: '<rootDir>/libs/testing/jest/global-teardown.mjs',
    },
  ],
};
