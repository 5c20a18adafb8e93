import type { ClusterClass, Topology } from '@capstan/api';
import { TopologyError } from './topology-errors.js';
import { resolveVariables, variableDefinitions, withDefaults } from './topology-variables.js';

describe('topology variables', () => {
  const definitions = variableDefinitions({
    spec: {
      variables: [
        { name: 'region', required: true, schema: { openAPIV3Schema: { type: 'string', minLength: 2 } } },
        {
          name: 'pss',
          required: false,
          schema: {
            openAPIV3Schema: {
              type: 'object',
              properties: {
                enabled: { type: 'boolean', default: true },
                level: { type: 'string', enum: ['baseline', 'restricted'], default: 'baseline' },
              },
              default: {},
            },
          },
        },
        {
          name: 'replicas',
          required: false,
          schema: { openAPIV3Schema: { type: 'integer', minimum: 1, maximum: 9 } },
        },
      ],
    },
  } as unknown as ClusterClass);
  const topology = (over: Partial<Topology>): Topology => ({
    classRef: { name: 'c' },
    version: 'v1.34.4',
    ...over,
  });

  it('defaults missing Cluster variables and the missing fields of given objects', () => {
    const resolved = resolveVariables(
      definitions,
      topology({ variables: [{ name: 'region', value: 'eu' }] }),
    );
    expect(resolved.cluster).toEqual({ region: 'eu', pss: { enabled: true, level: 'baseline' } });
    expect(withDefaults({ level: 'restricted' }, definitions[1]!.schema)).toEqual({
      enabled: true,
      level: 'restricted',
    });
  });

  it('gives each MachineDeployment and the control plane their overrides over the Cluster values', () => {
    const resolved = resolveVariables(
      definitions,
      topology({
        variables: [{ name: 'region', value: 'eu' }],
        controlPlane: { variables: { overrides: [{ name: 'replicas', value: 3 }] } },
        workers: {
          machineDeployments: [
            { class: 'w', name: 'md-0', variables: { overrides: [{ name: 'region', value: 'us' }] } },
          ],
        },
      }),
    );
    expect(resolved.controlPlane['replicas']).toBe(3);
    expect(resolved.cluster['replicas']).toBeUndefined();
    expect(resolved.machineDeployments.get('md-0')?.['region']).toBe('us');
  });

  it('matches a schema pattern in linear time, whatever value a cluster owner writes', () => {
    // (a+)+$ backtracks exponentially in JavaScript's RegExp on a long run of a's and a mismatch: with RegExp this
    // test would not finish; the RE2 engine answers at once.
    const nested = variableDefinitions({
      spec: {
        variables: [
          {
            name: 'name',
            required: true,
            schema: { openAPIV3Schema: { type: 'string', pattern: '^(a+)+$' } },
          },
        ],
      },
    } as unknown as ClusterClass);
    expect(() =>
      resolveVariables(nested, topology({ variables: [{ name: 'name', value: `${'a'.repeat(40)}!` }] })),
    ).toThrow(/must match the schema pattern/);
    expect(
      resolveVariables(nested, topology({ variables: [{ name: 'name', value: 'aaaa' }] })).cluster['name'],
    ).toBe('aaaa');
  });

  it('refuses a missing required variable, an undefined one and a value against its schema, naming them and not the value', () => {
    const attempt = (variables: Topology['variables']) => {
      try {
        resolveVariables(definitions, topology({ variables }));
      } catch (error) {
        expect(error).toBeInstanceOf(TopologyError);
        return (error as Error).message;
      }
      throw new Error('accepted');
    };
    expect(attempt(undefined)).toContain('required variable "region" is not set');
    expect(
      attempt([
        { name: 'region', value: 'eu' },
        { name: 'zone', value: 'a' },
      ]),
    ).toContain('"zone" is not defined');
    const wrong = attempt([
      { name: 'region', value: 'eu' },
      { name: 'replicas', value: 'secret-ish-text' },
    ]);
    expect(wrong).toContain('spec.topology.variables[name=replicas].value');
    expect(wrong).not.toContain('secret-ish-text');
    expect(
      attempt([
        { name: 'region', value: 'eu' },
        { name: 'pss', value: { level: 'none' } },
      ]),
    ).toContain('pss');
  });
});
