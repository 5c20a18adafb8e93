import { answerAdmissionReview, MalformedAdmissionReview } from './admission-review.js';
import { desiredValidatingWebhooks, validationClientConfig } from './validating-webhook-config.js';

const clusterClass = (variables: { name: string }[]) => ({
  apiVersion: 'cluster.x-k8s.io/v1beta2',
  kind: 'ClusterClass',
  metadata: { name: 'cc', namespace: 'ns' },
  spec: {
    infrastructure: { templateRef: { apiVersion: 'infrastructure.capstan.dev/v1alpha1', kind: 'SimClusterTemplate', name: 't' } },
    controlPlane: { templateRef: { apiVersion: 'controlplane.capstan.dev/v1alpha1', kind: 'K3sControlPlaneTemplate', name: 't' } },
    variables: variables.map((v) => ({ ...v, required: false, schema: { openAPIV3Schema: { type: 'string' } } })),
  },
});
const review = (request: Record<string, unknown>) => ({
  apiVersion: 'admission.k8s.io/v1',
  kind: 'AdmissionReview',
  request: { uid: 'u-1', kind: { group: 'cluster.x-k8s.io', version: 'v1beta2', kind: 'ClusterClass' }, ...request },
});

describe('answerAdmissionReview', () => {
  it('allows a valid ClusterClass', () => {
    expect(answerAdmissionReview(review({ operation: 'CREATE', object: clusterClass([{ name: 'a' }]) }))).toEqual({
      apiVersion: 'admission.k8s.io/v1',
      kind: 'AdmissionReview',
      response: { uid: 'u-1', allowed: true },
    });
  });

  it('refuses an invalid one with 422 Invalid, listing path: rule', () => {
    const object = clusterClass([{ name: 'a' }, { name: 'a' }]);
    const { response } = answerAdmissionReview(review({ operation: 'UPDATE', object, oldObject: clusterClass([]) }));
    expect(response).toEqual({
      uid: 'u-1',
      allowed: false,
      status: {
        code: 422,
        reason: 'Invalid',
        message:
          'ClusterClass.cluster.x-k8s.io "cc" is invalid: spec.variables[1].name: variable name must be unique: "a" is defined more than once (first at spec.variables[0])',
        details: {
          name: 'cc',
          group: 'cluster.x-k8s.io',
          kind: 'ClusterClass',
          causes: [
            {
              field: 'spec.variables[1].name',
              message: 'variable name must be unique: "a" is defined more than once (first at spec.variables[0])',
              reason: 'FieldValueInvalid',
            },
          ],
        },
      },
    });
  });

  it('allows other operations, and refuses kinds it does not validate', () => {
    expect(answerAdmissionReview(review({ operation: 'DELETE' })).response.allowed).toBe(true);
    const other = answerAdmissionReview(review({ operation: 'CREATE', kind: { group: 'cluster.x-k8s.io', kind: 'Cluster' }, object: {} }));
    expect(other.response).toMatchObject({ allowed: false, status: { code: 400 } });
  });

  it.each([
    ['not a review', { kind: 'ConversionReview' }, 'expected an admission.k8s.io/v1 AdmissionReview'],
    ['no request', { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview' }, 'the AdmissionReview has no request'],
    ['no uid', review({ uid: '' }), 'the AdmissionReview request has no uid'],
    ['no object', review({ operation: 'CREATE' }), 'the CREATE review carries no object'],
    ['no oldObject', review({ operation: 'UPDATE', object: clusterClass([]) }), 'the UPDATE review carries no oldObject'],
  ])('throws MalformedAdmissionReview for %s', (_what, body, message) => {
    expect(() => answerAdmissionReview(body)).toThrow(new MalformedAdmissionReview(message));
  });
});

describe('the ValidatingWebhookConfiguration', () => {
  it('reaches the same Service or URL as the conversion, at the validation path', () => {
    expect(validationClientConfig({ service: { name: 's', namespace: 'n', path: '/convert', port: 443 } })).toEqual({
      service: { name: 's', namespace: 'n', path: '/validate-cluster-x-k8s-io-v1beta2-clusterclass', port: 443 },
    });
    expect(validationClientConfig({ url: 'https://127.0.0.1:9443/convert' })).toEqual({
      url: 'https://127.0.0.1:9443/validate-cluster-x-k8s-io-v1beta2-clusterclass',
    });
  });

  it('fails closed on ClusterClass CREATE and UPDATE, with the CA bundle', () => {
    const [webhook] = desiredValidatingWebhooks('CA', { url: 'https://h:1/convert' });
    expect(webhook).toMatchObject({
      clientConfig: { caBundle: Buffer.from('CA').toString('base64') },
      rules: [{ apiGroups: ['cluster.x-k8s.io'], apiVersions: ['v1beta2'], operations: ['CREATE', 'UPDATE'], resources: ['clusterclasses'] }],
      failurePolicy: 'Fail',
      sideEffects: 'None',
      admissionReviewVersions: ['v1'],
    });
    expect(webhook!.timeoutSeconds).toBeLessThanOrEqual(10);
  });
});
