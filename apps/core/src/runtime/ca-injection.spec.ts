import { RESOURCES, type ExtensionConfig } from '@capstan/api';
import { CaInjectionError, caSecretOf, INJECT_CA_FROM_SECRET_ANNOTATION } from './ca-injection.js';

const annotated = (value?: string): ExtensionConfig => ({
  apiVersion: RESOURCES.ExtensionConfig.apiVersion,
  kind: RESOURCES.ExtensionConfig.kind,
  metadata: {
    name: 'ext',
    ...(value === undefined ? {} : { annotations: { [INJECT_CA_FROM_SECRET_ANNOTATION]: value } }),
  },
  spec: { clientConfig: { url: 'https://ext.example' } },
});

describe('the CA Secret of an ExtensionConfig', () => {
  it('is named <namespace>/<name> by its annotation', () => {
    expect(caSecretOf(annotated('ext-system/ext-ca'))).toEqual({ namespace: 'ext-system', name: 'ext-ca' });
    expect(caSecretOf(annotated())).toBeUndefined();
  });

  it.each(['ext-ca', '/ext-ca', 'ext-system/', 'a/b/c', ''])('refuses %p', (value) => {
    expect(() => caSecretOf(annotated(value))).toThrow(CaInjectionError);
    expect(() => caSecretOf(annotated(value))).toThrow(
      `${INJECT_CA_FROM_SECRET_ANNOTATION} must be <namespace>/<name>`,
    );
  });
});
