const { default: globalTeardown } = await import('../dist/jest/global-teardown.js');
export default globalTeardown;
