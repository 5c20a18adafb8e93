// Four projects: `unit` needs no servers; `integration` runs against the real kube-apiserver, etcd and
// NATS JetStream that libs/testing starts once per run (globalSetup) and stops afterwards (globalTeardown); `upstream`
// runs upstream Cluster API against Capstan; `deploy` runs deploy/ on a real node it starts itself.
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
    '^@capstan/provider-kit/testing$': '<rootDir>/libs/provider-kit/src/testing/index.ts',
    '^@capstan/([a-z0-9-]+)$': '<rootDir>/libs/$1/src/index.ts',
    '^(\\.{1,2}/.*)\\.js$': '$1',
  },
  testEnvironment: 'node',
  roots: ['<rootDir>/libs', '<rootDir>/apps'],
};

/**
 * Files that rewrite what every file shares through the one test API server: the converted CRDs' conversion webhook
 * (pointed at a core of their own) and the CRDs themselves. A file running next to them meets a CRD answering 429
 * "storage is (re)initializing" or a conversion `url` beside the Service it applies. scripts/test.sh runs every other
 * file first, two at a time (CAPSTAN_JEST_PHASE=parallel), then these one by one (CAPSTAN_JEST_PHASE=serial); without
 * the variable every file runs, as Jest schedules them.
 */
const SERIAL_TEST_FILES = [
  'apps/core/src/webhook/conversion-webhook.int.spec.ts',
  'libs/api/src/crd/crds.int.spec.ts',
  // `capstan init` applies deploy/'s ValidatingWebhookConfiguration, whose Service no pod backs here: while it stands,
  // every Cluster and ClusterClass write on the shared API server is refused.
  'apps/cli/src/commands/init.int.spec.ts',
  'apps/e2e/src/upstream/v1beta1-manifests.upstream.spec.ts',
  // The real node's suite: it needs the machine to itself (pods, images, five services and their clusters).
  'apps/e2e/src/deploy/deployed-capstan.deploy.spec.ts',
  'apps/e2e/src/deploy/compose.deploy.spec.ts',
];

const phase = process.env.CAPSTAN_JEST_PHASE;
if (phase !== undefined && phase !== 'parallel' && phase !== 'serial') {
  throw new Error(`CAPSTAN_JEST_PHASE must be parallel or serial, not ${phase}`);
}

/** @param {string} text a file path, as a pattern matching exactly it */
const escape = (text) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * The project's files for this phase: its own, less the serial files or only those (which end with `serialSuffix`).
 * @param {import('jest').Config & { testPathIgnorePatterns: string[] }} project
 * @param {string} [serialSuffix] absent: the project has no serial files
 * @returns {import('jest').Config}
 */
function phased(project, serialSuffix) {
  if (phase === 'parallel') {
    return { ...project, testPathIgnorePatterns: [...project.testPathIgnorePatterns, ...SERIAL_TEST_FILES.map(escape)] };
  }
  if (phase === 'serial') {
    const own = serialSuffix ? SERIAL_TEST_FILES.filter((file) => file.endsWith(serialSuffix)) : [];
    // A project without serial files ignores everything, so `--selectProjects` still finds it.
    return own.length > 0 ? { ...project, testMatch: own.map((file) => `<rootDir>/${file}`) } : { ...project, testPathIgnorePatterns: ['.*'] };
  }
  return project;
}

export default {
  testTimeout: 120000,
  // Run test files in a worker that is replaced once it holds more than this after a file: every file loads its
  // own module graph (ESM vm modules), which the process never gives back, so one long-lived process grew to
  // several GB over the suite. (With one core to spare Jest would otherwise run everything in its own process.)
  workerIdleMemoryLimit: '1.5GB',
  projects: [
    phased({
      ...shared,
      displayName: 'unit',
      testMatch: ['**/*.spec.ts'],
      testPathIgnorePatterns: ['/node_modules/', '/dist/', '\\.int\\.spec\\.ts$', '\\.upstream\\.spec\\.ts$', '\\.deploy\\.spec\\.ts$'],
    }),
    phased(
      {
        ...shared,
        displayName: 'integration',
        testMatch: ['**/*.int.spec.ts'],
        testPathIgnorePatterns: ['/node_modules/', '/dist/'],
        globalSetup: '<rootDir>/libs/testing/jest/global-setup.mjs',
        globalTeardown: '<rootDir>/libs/testing/jest/global-teardown.mjs',
      },
      '.int.spec.ts',
    ),
    phased(
      {
        // `npm run test:upstream`: upstream Cluster API's binaries against Capstan (docs/compatibility.md).
        ...shared,
        displayName: 'upstream',
        testMatch: ['**/*.upstream.spec.ts'],
        testPathIgnorePatterns: ['/node_modules/', '/dist/'],
        globalSetup: '<rootDir>/libs/testing/jest/global-setup.mjs',
        globalTeardown: '<rootDir>/libs/testing/jest/global-teardown.mjs',
      },
      '.upstream.spec.ts',
    ),
    phased(
      {
        // Capstan as its users deploy it (docs/deploy.md): it starts its own management cluster with a real node.
        ...shared,
        displayName: 'deploy',
        testMatch: ['**/*.deploy.spec.ts'],
        testPathIgnorePatterns: ['/node_modules/', '/dist/'],
      },
      '.deploy.spec.ts',
    ),
  ],
};
