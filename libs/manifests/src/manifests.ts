import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse, parseAllDocuments } from 'yaml';

export interface Manifest {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  [field: string]: unknown;
}

export class ManifestError extends Error {
  constructor(
    message: string,
    readonly file: string,
  ) {
    super(`${file}: ${message}`);
    this.name = 'ManifestError';
  }
}

/** The deploy/ folder of this checkout (the CLI and the test environment ship inside the workspace). */
export function deployDir(): string {
  return resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'deploy');
}

/**
 * Reads a kustomization the way `kubectl kustomize` does for plain bases: its `resources` in order, each a
 * YAML file or a folder with its own kustomization.yaml. Patches and generators are not used in deploy/.
 */
export function loadKustomization(dir: string): Manifest[] {
  const file = join(dir, 'kustomization.yaml');
  if (!existsSync(file)) throw new ManifestError('no kustomization.yaml', dir);
  const kustomization = parse(readFileSync(file, 'utf8')) as { resources?: string[] } | null;
  const manifests: Manifest[] = [];
  for (const resource of kustomization?.resources ?? []) {
    const path = join(dir, resource);
    if (!existsSync(path)) throw new ManifestError(`resource ${resource} does not exist`, file);
    manifests.push(...(statSync(path).isDirectory() ? loadKustomization(path) : loadManifestFile(path)));
  }
  return manifests;
}

export function loadManifestFile(path: string): Manifest[] {
  return parseAllDocuments(readFileSync(path, 'utf8'))
    .map((doc) => {
      if (doc.errors.length > 0) throw new ManifestError(doc.errors[0]!.message, path);
      return doc.toJS() as Manifest | null;
    })
    .filter((m): m is Manifest => m !== null)
    .map((m) => {
      if (!m.apiVersion || !m.kind || !m.metadata?.name) {
        throw new ManifestError('every document needs apiVersion, kind and metadata.name', path);
      }
      return m;
    });
}

/** CRDs first, then namespaces, then the rest with workloads last, so that everything applied finds what it depends on. */
export function applyOrder(manifests: Manifest[]): Manifest[] {
  // Workloads last: a pod gets <SERVICE>_SERVICE_HOST variables only for the Services that exist when it starts, and
  // the cluster-provider takes its endpoint address from one (deploy/services/cluster-provider.yaml).
  const workloads = new Set(['Deployment', 'StatefulSet', 'DaemonSet']);
  const rank = (m: Manifest) =>
    m.kind === 'CustomResourceDefinition' ? 0 : m.kind === 'Namespace' ? 1 : workloads.has(m.kind) ? 3 : 2;
  return [...manifests].sort((a, b) => rank(a) - rank(b));
}
