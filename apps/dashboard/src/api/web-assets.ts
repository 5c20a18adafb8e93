import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

// What the dashboard serves to the browser, all read once when it starts: the page's own files (apps/dashboard/web) and
// the few ES modules of lit-html they import, from the installed npm package. Nothing else of the disk or of
// node_modules is reachable: a request is answered only when its path is one of these, exactly (no path joining, so
// `../`, encoded or not, names nothing).

/** The page, its modules and its style (apps/dashboard/web): served at /dashboard/<file>, index.html at /dashboard. */
export const WEB_FILES = [
  'index.html',
  'app.css',
  'app.js',
  'api.js',
  'view.js',
  'fleet.js',
  'create.js',
  'cluster.js',
  'timeline.js',
  'machine.js',
] as const;

/** Where the page imports lit-html from (app.js: `./vendor/lit-html/lit-html.js`), below /dashboard/. */
export const LIT_HTML_PREFIX = 'vendor/lit-html/';

/**
 * lit-html's files the page imports, and what they import (relative imports only): the templating core and the
 * `repeat` directive (keyed lists). Its minified production modules, the package's default export condition.
 */
export const LIT_HTML_FILES = [
  'lit-html.js',
  'directive.js',
  'directive-helpers.js',
  'directives/repeat.js',
] as const;

export interface WebAsset {
  contentType: string;
  body: Buffer;
}

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
};

/** apps/dashboard/web, beside src/ and dist/ (this file runs from either). */
const WEB_DIR = fileURLToPath(new URL('../../web/', import.meta.url));

/**
 * The installed lit-html package's folder: its entry point resolved as Node resolves a dependency of this workspace,
 * then up to the package.json naming it (the package exports no `./package.json`).
 */
export function litHtmlRoot(): string {
  let entry: string;
  try {
    entry = createRequire(import.meta.url).resolve('lit-html');
  } catch (error) {
    throw new Error(
      `the dashboard's page needs the npm package lit-html (a dependency of apps/dashboard): run npm install (${
        error instanceof Error ? error.message : String(error)
      })`,
      { cause: error },
    );
  }
  for (let folder = dirname(entry); folder !== dirname(folder); folder = dirname(folder)) {
    try {
      const manifest = JSON.parse(readFileSync(join(folder, 'package.json'), 'utf8')) as { name?: string };
      if (manifest.name === 'lit-html') return folder;
    } catch {
      // No package.json here (lit-html's node/ folder has none): one level up.
    }
  }
  throw new Error(`no lit-html package.json above ${entry}`);
}

/** A source map comment names a file that is not served (and the images prune maps): it is dropped. */
function withoutSourceMap(text: string): string {
  return text.replace(/\n?\/\/# sourceMappingURL=\S+\s*$/, '\n');
}

function contentType(file: string): string {
  const type = CONTENT_TYPES[file.slice(file.lastIndexOf('.'))];
  if (!type) throw new Error(`no content type for ${file}`);
  return type;
}

/**
 * Every file the browser may get, keyed by its path below /dashboard/ (`index.html` is served at /dashboard itself),
 * read now: a missing file fails the start, not a page load.
 */
export function loadWebAssets(webDir = WEB_DIR, litRoot = litHtmlRoot()): ReadonlyMap<string, WebAsset> {
  const assets = new Map<string, WebAsset>();
  for (const file of WEB_FILES)
    assets.set(file, { contentType: contentType(file), body: readFileSync(join(webDir, file)) });
  for (const file of LIT_HTML_FILES) {
    const text = withoutSourceMap(readFileSync(join(litRoot, file), 'utf8'));
    assets.set(`${LIT_HTML_PREFIX}${file}`, { contentType: contentType(file), body: Buffer.from(text) });
  }
  return assets;
}
