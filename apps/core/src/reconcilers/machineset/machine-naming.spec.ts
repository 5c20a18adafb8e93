import { formatLabelValue } from '@capstan/kube';

import { MachineNameTemplateError, randomSuffix, renderMachineName } from './machine-naming.js';

describe('machine names and label values', () => {
  it('renders the default and custom naming templates', () => {
    const vars = { clusterName: 'demo', machineSetName: 'demo-md-0-abc', random: 'x7k2p' };
    expect(renderMachineName(undefined, vars)).toBe('demo-md-0-abc-x7k2p');
    expect(renderMachineName('{{ .cluster.name }}-worker-{{.random}}', vars)).toBe('demo-worker-x7k2p');
  });

  it('keeps the random part when cutting a long name to 63 characters', () => {
    const name = renderMachineName(undefined, {
      clusterName: 'c',
      machineSetName: 'm'.repeat(80),
      random: 'x7k2p',
    });
    expect(name).toHaveLength(63);
    expect(name.endsWith('x7k2p')).toBe(true);
  });

  it('refuses templates without .random or with unknown expressions', () => {
    const vars = { clusterName: 'c', machineSetName: 'm', random: 'r' };
    expect(() => renderMachineName('{{ .machineSet.name }}', vars)).toThrow(MachineNameTemplateError);
    expect(() => renderMachineName('{{ .random }}-{{ .namespace }}', vars)).toThrow(/unknown expression/);
  });

  it('draws random suffixes from the apimachinery alphabet', () => {
    expect(randomSuffix()).toMatch(/^[bcdfghjklmnpqrstvwxz2456789]{5}$/);
  });

  it('hashes label values that are too long or invalid as upstream MustFormatValue', () => {
    expect(formatLabelValue('demo-md-0')).toBe('demo-md-0');
    // Values computed with Go's fnv.New32a + base64.RawURLEncoding.
    expect(formatLabelValue('a'.repeat(100))).toBe('hash_Cgux2Q_z');
    expect(formatLabelValue(`md-${'x'.repeat(70)}`)).toBe('hash_XtYlAw_z');
    expect(formatLabelValue('ends-with-dash-')).toMatch(/^hash_[A-Za-z0-9_-]{6}_z$/);
  });
});
