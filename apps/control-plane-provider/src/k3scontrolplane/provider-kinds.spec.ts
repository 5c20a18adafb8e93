import { machineKindOf, pluralOf } from './provider-kinds.js';

describe('provider kind names', () => {
  it('pluralizes kinds as CRD names do', () => {
    expect(pluralOf('GenericInfrastructureMachineTemplate')).toBe('genericinfrastructuremachinetemplates');
    expect(pluralOf('Proxy')).toBe('proxies');
    expect(pluralOf('Gateway')).toBe('gateways');
    expect(pluralOf('Box')).toBe('boxes');
  });

  it('derives the machine kind from the template kind', () => {
    expect(machineKindOf('SimMachineTemplate')).toBe('SimMachine');
    expect(() => machineKindOf('SimMachine')).toThrow('not a machine template kind');
  });
});
