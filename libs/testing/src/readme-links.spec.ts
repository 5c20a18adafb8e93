import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from './repo.js';

// The README and the design doc are read on a fresh clone: every file they send the reader to must be in the
// repository, and none outside it (a sibling checkout such as ../shared is not there on a clone).

const root = repoRoot();
/** Made by setup, builds and runs, never checked in: a path under them cannot be checked on a clone. */
const GENERATED = new Set(['node_modules', 'dist', '.tools', '.capstan', '.nx', 'coverage', '.git']);
const topLevel = readdirSync(root).filter((name) => !GENERATED.has(name));
const escaped = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const REST = '[^\\s`\'")|,;:]*';
const PATH = new RegExp(
  `(?<![\\w./~-])(\\.\\./${REST}|(?:${topLevel.map(escaped).join('|')})(?:/${REST})?)`,
  'g',
);

/** Paths a document names: markdown link targets and repository paths in its text, without placeholders. */
function referencedPaths(markdown: string): string[] {
  const links = [...markdown.matchAll(/\]\(([^)\s]+)\)/g)]
    .map((m) => m[1]!)
    .filter((t) => !/^(https?:|mailto:|#)/.test(t));
  const named = [...markdown.matchAll(PATH)].map((m) => m[1]!);
  return [...new Set([...links, ...named].map((p) => p.replace(/#.*$/, '').replace(/[.]$/, '')))].filter(
    (p) => p !== '' && !/[<>*]|\.\.\.|\/dist(\/|$)/.test(p),
  );
}

describe.each(['README.md', 'docs/architecture.md'])('%s', (doc) => {
  const text = () => readFileSync(join(root, doc), 'utf8');

  it('names only paths inside the repository', () => {
    expect(referencedPaths(text()).filter((p) => p.startsWith('../') || p.startsWith('/'))).toEqual([]);
  });

  it('names only files and folders that exist in the repository', () => {
    const paths = referencedPaths(text());
    expect(paths.length).toBeGreaterThan(10);
    expect(paths.filter((p) => !existsSync(join(root, p)))).toEqual([]);
  });
});

describe('referencedPaths', () => {
  it('finds link targets and paths in text, and leaves out placeholders and build output', () => {
    expect(
      referencedPaths(
        'See [the runtime](docs/runtime.md#queue), `../shared/ARCHITECTURE.md`, (docs/sim.md), `apps/<service>/dist/main.js`, libs/kube/dist/x.js.',
      ),
    ).toEqual(['docs/runtime.md', '../shared/ARCHITECTURE.md', 'docs/sim.md']);
  });
});
