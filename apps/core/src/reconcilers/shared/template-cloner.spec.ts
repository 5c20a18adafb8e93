import { cloneFromTemplate, cloneKindOf } from './template-cloner.js';

describe('cloning from templates', () => {
  it('builds the object a template describes, annotated with where it came from', () => {
    const template = {
      apiVersion: 'infrastructure.generic.capstan.dev/v1beta2',
      kind: 'GenericInfrastructureMachineTemplate',
      metadata: { name: 'workers', namespace: 'ns' },
      spec: {
        template: {
          metadata: {
            labels: { tier: 'worker', 'cluster.x-k8s.io/cluster-name': 'wrong' },
            annotations: { a: '1' },
          },
          spec: { size: 'large', disks: [{ gb: 20 }] },
        },
      },
    };
    const clone = cloneFromTemplate(template, {
      name: 'demo-md-0-x7k2p',
      namespace: 'ns',
      clusterName: 'demo',
      kind: cloneKindOf(template.kind),
      apiVersion: 'infrastructure.generic.capstan.dev/v1beta2',
      labels: { 'cluster.x-k8s.io/set-name': 'demo-md-0' },
      annotations: { b: '2' },
      ownerReferences: [
        { apiVersion: 'cluster.x-k8s.io/v1beta2', kind: 'MachineSet', name: 'demo-md-0', uid: 'u1' },
      ],
      templateRef: { apiGroup: 'infrastructure.generic.capstan.dev', kind: template.kind, name: 'workers' },
    });
    expect(clone).toEqual({
      apiVersion: 'infrastructure.generic.capstan.dev/v1beta2',
      kind: 'GenericInfrastructureMachine',
      metadata: {
        name: 'demo-md-0-x7k2p',
        namespace: 'ns',
        labels: {
          tier: 'worker',
          'cluster.x-k8s.io/cluster-name': 'demo',
          'cluster.x-k8s.io/set-name': 'demo-md-0',
        },
        annotations: {
          a: '1',
          b: '2',
          'cluster.x-k8s.io/cloned-from-name': 'workers',
          'cluster.x-k8s.io/cloned-from-groupkind':
            'GenericInfrastructureMachineTemplate.infrastructure.generic.capstan.dev',
        },
        ownerReferences: [
          { apiVersion: 'cluster.x-k8s.io/v1beta2', kind: 'MachineSet', name: 'demo-md-0', uid: 'u1' },
        ],
      },
      spec: { size: 'large', disks: [{ gb: 20 }] },
    });
    // The clone's spec is a copy: changing it leaves the template alone.
    (clone['spec'] as { disks: { gb: number }[] }).disks[0]!.gb = 40;
    expect(template.spec.template.spec.disks[0]!.gb).toBe(20);
  });

  it('strips the Template suffix only where there is one', () => {
    expect(cloneKindOf('K3sConfigTemplate')).toBe('K3sConfig');
    expect(cloneKindOf('Remediation')).toBe('Remediation');
  });
});
