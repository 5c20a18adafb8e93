import { type Manifest } from './manifests.js';

/** One `--image name=reference`: every container whose image is `name` (any tag or digest) runs `reference` instead. */
export interface ImageOverride {
  name: string;
  reference: string;
}

export class ImageOverrideError extends Error {
  constructor(readonly input: string) {
    super(`an image override is name=reference (e.g. nats=registry.example.com/nats:2.11), not "${input}"`);
    this.name = 'ImageOverrideError';
  }
}

/** Parses `name=reference`; the name is an image without its tag or digest, as kustomize's `images` field takes it. */
export function parseImageOverride(input: string): ImageOverride {
  const at = input.indexOf('=');
  const name = input.slice(0, at).trim();
  const reference = input.slice(at + 1).trim();
  if (at <= 0 || !reference || /[:@]/.test(name.split('/').at(-1)!) || /\s/.test(reference)) {
    throw new ImageOverrideError(input);
  }
  return { name, reference };
}

/** The repository part of an image reference: without `:tag` (a colon after the last slash) or `@digest`. */
export function imageRepository(reference: string): string {
  const withoutDigest = reference.split('@')[0]!;
  const lastSlash = withoutDigest.lastIndexOf('/');
  const colon = withoutDigest.indexOf(':', lastSlash + 1);
  return colon === -1 ? withoutDigest : withoutDigest.slice(0, colon);
}

interface PodTemplateHolder {
  spec?: { template?: { spec?: PodSpec } };
}
interface PodSpec {
  containers?: { image?: string }[];
  initContainers?: { image?: string }[];
}

/**
 * The manifests with every matching container image replaced (Deployments, StatefulSets, DaemonSets, Jobs: anything
 * with a pod template), as `kustomize edit set image` does; others are returned as they are. Nothing is changed in
 * place. Used where a cluster cannot pull the upstream images (a mirror, or images built locally).
 */
export function withImageOverrides(manifests: Manifest[], overrides: ImageOverride[]): Manifest[] {
  if (overrides.length === 0) return manifests;
  const replacement = (image: string | undefined) =>
    image === undefined ? undefined : overrides.find((o) => o.name === imageRepository(image))?.reference;
  return manifests.map((manifest) => {
    const podSpec = (manifest as PodTemplateHolder).spec?.template?.spec;
    const all = [...(podSpec?.containers ?? []), ...(podSpec?.initContainers ?? [])];
    if (!all.some((c) => replacement(c.image))) return manifest;
    const copy = structuredClone(manifest);
    const copied = (copy as PodTemplateHolder).spec!.template!.spec!;
    for (const container of [...(copied.containers ?? []), ...(copied.initContainers ?? [])]) {
      container.image = replacement(container.image) ?? container.image;
    }
    return copy;
  });
}
