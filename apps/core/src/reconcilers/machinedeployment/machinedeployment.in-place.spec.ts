import type { MachineTemplateSpec } from '@capstan/api';
import { fieldsNeverInPlace } from './machinedeployment.in-place.js';

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
      bootstrap: { configRef: { apiGroup: 'bootstrap.example.com', kind: 'OtherConfigTemplate', name: 'b1' } },
    });
    expect(fieldsNeverInPlace(template(), to)).toEqual([
      'spec.template.spec.bootstrap',
      'spec.template.spec.failureDomain',
      'spec.template.spec.infrastructureRef',
    ]);
  });
});
