export default async function globalTeardown(): Promise<void> {
  await globalThis.__capstanTestEnvironment?.stop();
  globalThis.__capstanTestEnvironment = undefined;
}
