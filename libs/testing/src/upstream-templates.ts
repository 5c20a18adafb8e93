import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { substitute, type Manifest } from '@capstan/manifests';
import { TestEnvironmentError } from './errors.js';
import type { UpstreamClusterApi } from './upstream-cluster-api.js';

// Upstream's cluster templates as its release ships them (the docker provider's test/infrastructure/docker/templates
// in the Go module cache), with clusterctl's variables filled in: compatibility tests apply upstream's own files,
// not a copy that could drift from them.

/** Where the pinned release keeps the docker provider's cluster templates. */
export function upstreamTemplatesDir(upstream: UpstreamClusterApi): string {
  return join(upstream.testSourceDir, 'infrastructure', 'docker', 'templates');
}

/**
 * One of upstream's docker provider templates (e.g. `clusterclass-in-memory.yaml`), its variables filled in from
 * `values`, as manifests. Objects without a namespace get `namespace`, as clusterctl puts them in the target
 * namespace (upstream's ClusterClass files name none).
 */
export function upstreamTemplate(
  upstream: UpstreamClusterApi,
  file: string,
  options: { namespace: string; values?: Readonly<Record<string, string | undefined>> },
): Manifest[] {
  const path = join(upstreamTemplatesDir(upstream), file);
  const text = substitute(readFileSync(path, 'utf8'), {
    NAMESPACE: options.namespace,
    ...options.values,
  });
  return parseAllDocuments(text)
    .map((doc) => {
      if (doc.errors.length > 0)
        throw new TestEnvironmentError(`${path}: ${doc.errors[0]!.message}`, { path });
      return doc.toJS() as Manifest | null;
    })
    .filter((manifest): manifest is Manifest => manifest !== null)
    .map((manifest) => ({ ...manifest, metadata: { namespace: options.namespace, ...manifest.metadata } }));
}
