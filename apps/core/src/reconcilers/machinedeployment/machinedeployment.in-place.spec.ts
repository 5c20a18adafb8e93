import { ANNOTATIONS, IN_PLACE_ANNOTATIONS, type MachineTemplateSpec } from '@capstan/api';
import { iso, machine, NOW, running } from '../../testing/machine-builder.js';
import { fieldsNeverInPlace, surplusToDrop } from './machinedeployment.in-place.js';

const template = (overrides: Partial<MachineTemplateSpec['spec']> = {}): MachineTemplateSpec => ({
  spec: {
    clusterName: 'c',
    version: 'v1.34.4',
    bootstrap: { configRef: { apiGroup: 'bootstrap.capstan.dev', kind: 'K3sConfigTemplate', name: 'b1' } },
    infrastructureRef: { apiGroup: 'infrastructure.capstan.dev', kind: 'SimMachineTemplate', name: 'i1' },
    ...overrides,
  },
});

describe('fieldsNeverInPlace', () => {
  it('lets the version and the bootstrap template name change', () => {
    const to = template({
      version: 'v1.35.4',
      bootstrap: { configRef: { apiGroup: 'bootstrap.capstan.dev', kind: 'K3sConfigTemplate', name: 'b2' } },
    });
    expect(fieldsNeverInPlace(template(), to)).toEqual([]);
  });

  it('names an infrastructure template change, a failure domain change and a bootstrap kind change', () => {
    const to = template({
      infrastructureRef: { apiGroup: 'infrastructure.capstan.dev', kind: 'SimMachineTemplate', name: 'i2' },
      failureDomain: 'zone-b',
      bootstrap: {
        configRef: { apiGroup: 'bootstrap.example.com', kind: 'OtherConfigTemplate', name: 'b1' },
      },
    });
    expect(fieldsNeverInPlace(template(), to)).toEqual([
      'spec.template.spec.bootstrap',
      'spec.template.spec.failureDomain',
      'spec.template.spec.infrastructureRef',
    ]);
  });
});

describe('surplusToDrop', () => {
  const surge = { replicas: 2, maxSurge: 1, maxUnavailable: 0 };
  // The new set was created 10 minutes ago; the surge Machine after it, the moved ones long before.
  const setCreated = Date.parse(iso(600, NOW));
  const moved = (name: string, extra = {}) => running(name, { createdSecondsAgo: 86_400, ...extra });
  const surged = running('s', { createdSecondsAgo: 300 });
  const names = (list: { metadata: { name?: string } }[]) => list.map((m) => m.metadata.name);

  it('keeps the surge while a moved Machine is still updating: dropping any would leave one serving', () => {
    const updating = moved('b', { annotations: { [IN_PLACE_ANNOTATIONS.updateInProgress]: 'h2' } });
    expect(surplusToDrop([surged, moved('a'), updating], surge, setCreated)).toEqual([]);
  });

  it('drops the Machine surged for the rollout, not one updated in place, once all serve', () => {
    expect(names(surplusToDrop([moved('a'), surged, moved('b')], surge, setCreated))).toEqual(['s']);
  });

  it('drops one that does not serve anyway first, and one marked for deletion before anything', () => {
    const down = moved('b', { conditions: { Ready: 'False', Available: 'False' } });
    expect(names(surplusToDrop([moved('a'), surged, down], surge, setCreated))).toEqual(['b']);
    const marked = moved('a', { annotations: { [ANNOTATIONS.deleteMachine]: 'true' } });
    expect(names(surplusToDrop([marked, surged, moved('b')], surge, setCreated))).toEqual(['a']);
  });

  it('drops nothing from a set at or below replicas', () => {
    expect(surplusToDrop([moved('a'), machine({ name: 'b' })], surge, setCreated)).toEqual([]);
  });
});
