import { MALFORMED_LABEL } from './invariants.js';
import {
  MANIFEST_CATEGORIES,
  MANIFEST_KINDS,
  baseline,
  distinctCases,
  explainingCondition,
  judgeRefusal,
  malformedManifests,
} from './malformed-manifests.js';
import { createRandom } from './random.js';

const target = { namespace: 'ns', cluster: 'chaos-target', version: 'v1.34.4' };

describe('malformed manifests', () => {
  it('covers every category the issue names, on every kind', () => {
    const cases = distinctCases();
    expect(new Set(cases.map((c) => c.mutation.category))).toEqual(new Set(MANIFEST_CATEGORIES));
    expect(new Set(cases.map((c) => c.kind))).toEqual(new Set(MANIFEST_KINDS));
  });

  it('makes the asked number, every distinct case first, each a new labelled object differing from its baseline', () => {
    const manifests = malformedManifests(200, target, createRandom(1));
    expect(manifests).toHaveLength(200);
    expect(new Set(manifests.slice(0, distinctCases().length).map((m) => m.label)).size).toBe(
      distinctCases().length,
    );
    expect(new Set(manifests.map((m) => m.manifest.metadata.name)).size).toBe(200);
    for (const m of manifests) {
      expect(m.manifest.metadata.labels?.[MALFORMED_LABEL]).toBe('true');
      // A renamed case differs by its name; the others differ from the baseline of the same name.
      if (/^chaos-bad-\d+-[a-z0-9]+$/.test(m.manifest.metadata.name)) {
        expect(JSON.stringify(m.manifest)).not.toBe(
          JSON.stringify(baseline(m.kind, m.manifest.metadata.name, target)),
        );
      } else expect(m.category).toMatch(/name/);
    }
    expect(malformedManifests(30, target, createRandom(1)).map((m) => m.label)).toEqual(
      manifests.slice(0, 30).map((m) => m.label),
    );
  });

  it('names over 63 characters, negative replicas, mismatched selectors and missing kinds are among them', () => {
    const manifests = malformedManifests(distinctCases().length, target, createRandom(2));
    const long = manifests.find((m) => m.category === 'name-over-63' && m.label.includes('metadata.name'))!;
    expect(long.manifest.metadata.name.length).toBeGreaterThan(63);
    const negative = manifests.find(
      (m) => m.category === 'negative-replicas' && m.kind === 'MachineDeployment',
    )!;
    expect((negative.manifest['spec'] as { replicas: number }).replicas).toBe(-1);
    const selector = manifests.find((m) => m.category === 'selector-mismatch')!;
    const spec = selector.manifest['spec'] as {
      selector: { matchLabels: Record<string, string> };
      template: { metadata: { labels: Record<string, string> } };
    };
    expect(
      Object.entries(spec.selector.matchLabels).every(([k, v]) => spec.template.metadata.labels[k] === v),
    ).toBe(false);
    expect(
      manifests.some(
        (m) => m.category === 'nonexistent-kind' && JSON.stringify(m.manifest).includes('NoSuchMachine'),
      ),
    ).toBe(true);
  });

  it('gives provider objects the owner their controller waits for', () => {
    const manifests = malformedManifests(distinctCases().length, target, createRandom(3));
    const config = manifests.find((m) => m.kind === 'K3sConfig')!;
    expect(config.companions.map((c) => c.kind)).toEqual(['SimMachine', 'Machine']);
    const machine = config.companions[1]!;
    expect(machine['spec']).toMatchObject({
      bootstrap: { configRef: { kind: 'K3sConfig', name: config.manifest.metadata.name } },
    });
    expect(manifests.find((m) => m.kind === 'MachineHealthCheck')!.companions).toEqual([]);
  });

  it('judges refusals and conditions by whether they name the rule', () => {
    expect(judgeRefusal('spec.replicas: Invalid value: -1', ['replicas']).outcome).toBe('refused');
    expect(judgeRefusal('404 page not found', ['replicas']).outcome).toBe('refused-unclear');
    const conditions = [
      { type: 'Paused', status: 'False', reason: 'NotPaused' },
      {
        type: 'InfrastructureReady',
        status: 'False',
        reason: 'InvalidReference',
        message: 'kind NoSuchMachine is not served',
      },
    ];
    expect(explainingCondition(conditions, ['NoSuchMachine'])?.type).toBe('InfrastructureReady');
    expect(explainingCondition(conditions, ['selector'])).toBeUndefined();
    // Naming the field in a happy condition is not an explanation.
    expect(
      explainingCondition(
        [{ type: 'ScalingUp', status: 'True', message: 'Scaling up from 1 to 2 replicas' }],
        ['replicas'],
      ),
    ).toBeUndefined();
    expect(
      explainingCondition(
        [
          {
            type: 'ScalingUp',
            status: 'True',
            message: 'Scaling up is blocked because Cluster x does not exist',
          },
        ],
        ['does not exist'],
      )?.type,
    ).toBe('ScalingUp');
  });
});
