import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { stringify } from 'yaml';
import { customResourceOf } from '../schema/metadata.js';
import { type CustomResourceDefinition, buildCrd } from './crd-builder.js';
import { CUSTOM_RESOURCE_CLASSES } from './kinds.js';

/** How to regenerate the checked-in CRDs; the drift test prints it. */
export const REGENERATE_COMMAND = 'node scripts/build.mjs api && node libs/api/dist/crd/generate.js';

const HEADER = `# Generated from the classes in libs/api/src/types by libs/api/src/crd/generate.ts. Do not edit.\n# Regenerate: ${REGENERATE_COMMAND}\n`;

/** The CRDs of every Capstan kind, as objects with wire field names. */
export function buildCrds(): CustomResourceDefinition[] {
  return CUSTOM_RESOURCE_CLASSES.map(buildCrd);
}

/** `<group>_<plural>.yaml`, as controller-gen names CRD files. */
export function crdFileName(crd: CustomResourceDefinition): string {
  return `${crd.spec.group}_${crd.spec.names.plural}.yaml`;
}

/** The CRD manifests plus a kustomization.yaml listing them, by file name. */
export function generateCrds(): Record<string, string> {
  const files: Record<string, string> = {};
  for (const cls of CUSTOM_RESOURCE_CLASSES) {
    if (!customResourceOf(cls)) continue;
    const crd = buildCrd(cls);
    files[crdFileName(crd)] = HEADER + stringify(crd, { lineWidth: 120 });
  }
  const kustomization = {
    apiVersion: 'kustomize.config.k8s.io/v1beta1',
    kind: 'Kustomization',
    resources: Object.keys(files).sort(),
  };
  files['kustomization.yaml'] = HEADER + stringify(kustomization);
  return files;
}

/** Writes the manifests into `dir`, removing generated YAML files that no longer have a class. */
export function writeCrds(dir: string): string[] {
  mkdirSync(dir, { recursive: true });
  const files = generateCrds();
  for (const stale of readdirSync(dir).filter((name) => name.endsWith('.yaml') && !(name in files)))
    rmSync(join(dir, stale));
  for (const [name, content] of Object.entries(files)) writeFileSync(join(dir, name), content);
  return Object.keys(files);
}

/** `deploy/crds` of the repository this file lives in (works from src/ and from dist/). */
export function defaultCrdDirectory(): string {
  return fileURLToPath(new URL('../../../../deploy/crds/', import.meta.url));
}

const invokedAsScript =
  process.argv[1] !== undefined && import.meta.url === pathToFileURL(resolve(process.argv[1])).href;
if (invokedAsScript) {
  const dir = process.argv[2] ? resolve(process.argv[2]) : defaultCrdDirectory();
  const written = writeCrds(dir);
  process.stdout.write(`crd: wrote ${written.length} file(s) to ${dir}\n`);
}
