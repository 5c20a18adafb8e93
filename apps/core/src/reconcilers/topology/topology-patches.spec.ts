import type { ClusterClassPatch } from '@capstan/api';
import { applyPatches, type PatchTarget } from './topology-patches.js';

// What a class's patches may not do, whatever the variables a cluster owner sets: write outside the template's spec,
// expand YAML aliases, or have an external answer change a template's name or namespace.
describe('patches, read as a hostile author or cluster owner would', () => {
  const target = (): PatchTarget => ({
    role: { kind: 'infrastructureCluster' },
    template: {
      apiVersion: 'infrastructure.capstan.dev/v1alpha1',
      kind: 'SimClusterTemplate',
      metadata: { name: 'c', namespace: 'fleet' },
      spec: { template: { spec: { mode: 'dedicated' } } },
    },
    variables: { evil: 'a: &x [1]\nb: *x' },
    describe: 'the infrastructure cluster template',
    holder: {
      apiVersion: 'cluster.x-k8s.io/v1beta2',
      kind: 'Cluster',
      namespace: 'fleet',
      name: 'c',
      fieldPath: 'spec.infrastructureRef',
    },
  });
  const inline = (jsonPatch: Record<string, unknown>): ClusterClassPatch =>
    ({
      name: 'p',
      definitions: [
        {
          selector: {
            apiVersion: 'infrastructure.capstan.dev/v1alpha1',
            kind: 'SimClusterTemplate',
            matchResources: { infrastructureCluster: true },
          },
          jsonPatches: [jsonPatch],
        },
      ],
      // Hostile patches need not fit the schema's types: unknown first.
    }) as unknown as ClusterClassPatch;
  const none = { caller: undefined, forObject: { namespace: 'fleet' } };

  it('refuses a path outside /spec/, and leaves the template as it was', async () => {
    const t = target();
    await expect(
      applyPatches(
        [inline({ op: 'replace', path: '/metadata/namespace', value: 'kube-system' })],
        [t],
        {},
        none,
      ),
    ).rejects.toThrow(/must start with \/spec\//);
    expect(t.template['metadata']).toEqual({ name: 'c', namespace: 'fleet' });
  });

  it('refuses a template that renders YAML aliases', async () => {
    await expect(
      applyPatches(
        [inline({ op: 'add', path: '/spec/template/spec/extra', valueFrom: { template: '{{ .evil }}' } })],
        [target()],
        {},
        none,
      ),
    ).rejects.toThrow(/does not render YAML or JSON/);
  });

  it('refuses an external answer that renames the template', async () => {
    const caller = {
      callExtension: async () =>
        ({
          status: 'Success',
          items: [
            {
              uid: '0',
              patchType: 'JSONMergePatch',
              patch: Buffer.from(JSON.stringify({ metadata: { namespace: 'kube-system' } })).toString(
                'base64',
              ),
            },
          ],
        }) as never,
    };
    const external = { name: 'ext', external: { generatePatchesExtension: 'gen.ext' } } as ClusterClassPatch;
    await expect(
      applyPatches([external], [target()], {}, { caller, forObject: { namespace: 'fleet' } }),
    ).rejects.toThrow(/changes more than the spec/);
  });
});
