import { listVariables, MissingVariablesError, substitute } from './template-variables.js';

describe('template substitution', () => {
  const template = 'name: ${CLUSTER_NAME}\nns: ${NAMESPACE:=default}\nver: ${ KUBERNETES_VERSION }\ncidr: ${POD_CIDR:-10.42.0.0/16}\nx: ${EMPTY_OK=keep}';

  it('lists every variable once, with its default', () => {
    expect(listVariables(template)).toEqual([
      { name: 'CLUSTER_NAME' },
      { name: 'NAMESPACE', defaultValue: 'default' },
      { name: 'KUBERNETES_VERSION' },
      { name: 'POD_CIDR', defaultValue: '10.42.0.0/16' },
      { name: 'EMPTY_OK', defaultValue: 'keep' },
    ]);
  });

  it('uses values, then defaults; `:=` treats empty as unset, `=` does not', () => {
    const out = substitute(template, { CLUSTER_NAME: 'demo', KUBERNETES_VERSION: 'v1.34.4', NAMESPACE: '', EMPTY_OK: '' });
    expect(out).toBe('name: demo\nns: default\nver: v1.34.4\ncidr: 10.42.0.0/16\nx: ');
  });

  it('names every missing variable at once', () => {
    let error: unknown;
    try {
      substitute(template, {});
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(MissingVariablesError);
    expect((error as MissingVariablesError).variables).toEqual(['CLUSTER_NAME', 'KUBERNETES_VERSION']);
    expect((error as Error).message).toContain('[CLUSTER_NAME, KUBERNETES_VERSION]');
  });
});
