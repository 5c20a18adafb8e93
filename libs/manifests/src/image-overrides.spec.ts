import { applyOrder, deployDir, loadKustomization } from './manifests.js';
import {
  ImageOverrideError,
  imageRepository,
  parseImageOverride,
  withImageOverrides,
} from './image-overrides.js';

describe('image overrides (capstan init --image)', () => {
  it('parses name=reference and refuses anything else with the expected form in the message', () => {
    expect(parseImageOverride('nats=capstan.dev/nats:2.9.10')).toEqual({
      name: 'nats',
      reference: 'capstan.dev/nats:2.9.10',
    });
    expect(parseImageOverride('ghcr.io/capstan-dev/core=registry.local:5000/core@sha256:abc')).toEqual({
      name: 'ghcr.io/capstan-dev/core',
      reference: 'registry.local:5000/core@sha256:abc',
    });
    for (const bad of ['nats', '=x', 'nats=', 'nats:2.11=x', 'nats=a b']) {
      expect(() => parseImageOverride(bad)).toThrow(ImageOverrideError);
    }
    expect(() => parseImageOverride('nats')).toThrow(/name=reference/);
  });

  it('takes the repository without tag or digest, keeping a registry port', () => {
    expect(imageRepository('nats:2.11-alpine')).toBe('nats');
    expect(imageRepository('registry.local:5000/capstan/core:0.1.0')).toBe(
      'registry.local:5000/capstan/core',
    );
    expect(imageRepository('ghcr.io/capstan-dev/core@sha256:0123')).toBe('ghcr.io/capstan-dev/core');
    expect(imageRepository('registry.local:5000/core')).toBe('registry.local:5000/core');
  });

  it("replaces deploy/'s NATS image and one service's image, and nothing else", () => {
    const manifests = applyOrder(loadKustomization(deployDir()));
    const overridden = withImageOverrides(manifests, [
      parseImageOverride('nats=capstan.dev/nats:2.9.10'),
      parseImageOverride('ghcr.io/capstan-dev/core=registry.local/core:0.2.0'),
    ]);
    const images = (list: typeof manifests) =>
      Object.fromEntries(
        list
          .filter((m) => m.kind === 'Deployment' || m.kind === 'StatefulSet')
          .map((m) => [
            m.metadata.name,
            (
              m as unknown as { spec: { template: { spec: { containers: { image: string }[] } } } }
            ).spec.template.spec.containers.map((c) => c.image),
          ]),
      );
    const before = images(manifests);
    const after = images(overridden);
    expect(after['capstan-nats']).toEqual(['capstan.dev/nats:2.9.10']);
    expect(after['capstan-core']).toEqual(['registry.local/core:0.2.0']);
    for (const name of Object.keys(before).filter((n) => n !== 'capstan-nats' && n !== 'capstan-core')) {
      expect(after[name]).toEqual(before[name]);
    }
    // The loaded manifests are not changed.
    expect(images(manifests)).toEqual(before);
    expect(before['capstan-nats']).toEqual(['nats:2.11-alpine']);
  });
});
