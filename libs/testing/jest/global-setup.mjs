// Jest loads global setup outside its module mapping, so it runs the compiled library (built here first).
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../..', import.meta.url));
execFileSync(process.execPath, ['scripts/build.mjs', 'testing'], { cwd: root, stdio: 'ignore' });
const { default: globalSetup } = await import('../dist/jest/global-setup.js');
export default globalSetup;
