import { guessPlural, machineKindOf } from './provider-kinds.js';

describe('provider kind names', () => {
  it('pluralises provider kinds as their CRD names do', () => {
    expect(guessPlural('SimMachine')).toBe('simmachines');
    expect(guessPlural('K3sConfig')).toBe('k3sconfigs');
    expect(guessPlural('GenericInfrastructureCluster')).toBe('genericinfrastructureclusters');
    expect(guessPlural('DockerMachinePool')).toBe('dockermachinepools');
    expect(guessPlural('SSHHost')).toBe('sshhosts');
    expect(guessPlural('Proxy')).toBe('proxies');
    expect(guessPlural('Gateway')).toBe('gateways');
    expect(guessPlural('Address')).toBe('addresses');
    expect(guessPlural('Box')).toBe('boxes');
  });

  it('derives the machine kind from the template kind', () => {
    expect(machineKindOf('SimMachineTemplate')).toBe('SimMachine');
    expect(() => machineKindOf('SimMachine')).toThrow('not a machine template kind');
  });
});
