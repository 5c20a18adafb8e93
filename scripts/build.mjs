// Compiles every project's src/ to dist/ with swc (type-checking is `npm run typecheck`). Incremental:
// a file is compiled again only when its source is newer than its output.
import { transformFile } from '@swc/core';
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';

const root = join(dirname(new URL(import.meta.url).pathname), '..');
const swcrc = JSON.parse(readFileSync(join(root, '.swcrc'), 'utf8'));
delete swcrc.$schema;

function* sources(dir) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* sources(path);
    else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.spec.ts') && !entry.name.endsWith('.d.ts')) yield path;
  }
}

const wanted = process.argv.slice(2);
const projects = ['libs', 'apps']
  .flatMap((kind) => readdirSync(join(root, kind)).map((name) => ({ name, dir: join(root, kind, name) })))
  .filter((p) => wanted.length === 0 || wanted.includes(p.name));

let compiled = 0;
await Promise.all(
  projects.map(async ({ dir }) => {
    const src = join(dir, 'src');
    try {
      statSync(src);
    } catch {
      return;
    }
    for (const file of sources(src)) {
      const out = join(dir, 'dist', relative(src, file)).replace(/\.ts$/, '.js');
      try {
        if (statSync(out).mtimeMs >= statSync(file).mtimeMs) continue;
      } catch {
        /* not built yet */
      }
      const result = await transformFile(file, { ...swcrc, swcrc: false, filename: file, sourceFileName: relative(dirname(out), file) });
      mkdirSync(dirname(out), { recursive: true });
      writeFileSync(out, `${result.code}\n//# sourceMappingURL=${out.split('/').pop()}.map\n`);
      if (result.map) writeFileSync(`${out}.map`, result.map);
      compiled++;
    }
  }),
);
process.stdout.write(`build: ${compiled} file(s) compiled\n`);
