import { validateClusterClass } from '@capstan/api';
import { answerAdmissionReview, MalformedAdmissionReview, type AdmissionValidators } from './admission-review.js';
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

const CLASS_PATH = '/validate-cluster-x-k8s-io-v1beta2-clusterclass';
const CLASS_RULES: AdmissionValidators = {
  'cluster.x-k8s.io/ClusterClass': async ({ object }) => ({ issues: validateClusterClass(object), warnings: [] }),
};
const answer = (body: unknown, validators: AdmissionValidators = CLASS_RULES, path = CLASS_PATH) =>
  answerAdmissionReview(body, path, validators);

describe('answerAdmissionReview', () => {
  it('allows a valid ClusterClass', async () => {
    expect(await answer(review({ operation: 'CREATE', object: clusterClass([{ name: 'a' }]) }))).toEqual({
      apiVersion: 'admission.k8s.io/v1',
      kind: 'AdmissionReview',
      response: { uid: 'u-1', allowed: true },
    });
  });

  it('refuses an invalid one with 422 Invalid, listing path: rule', async () => {
    const object = clusterClass([{ name: 'a' }, { name: 'a' }]);
    const { response } = await answer(review({ operation: 'UPDATE', object, oldObject: clusterClass([]) }));
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

  it('refuses a write not allowed now with 403 Forbidden, and passes warnings on whatever the answer', async () => {
    const rules: AdmissionValidators = {
      'cluster.x-k8s.io/ClusterClass': async ({ operation }) =>
        operation === 'DELETE'
          ? { issues: [], warnings: ['w'], forbidden: 'ClusterClass cannot be deleted because it is used by Cluster(s): ns/a' }
          : { issues: [], warnings: ['careful'] },
    };
    const deleted = await answer(review({ operation: 'DELETE', oldObject: clusterClass([]) }), rules);
    expect(deleted.response).toEqual({
      uid: 'u-1',
      allowed: false,
      warnings: ['w'],
      status: {
        code: 403,
        reason: 'Forbidden',
        message: 'clusterclasses.cluster.x-k8s.io "cc" is forbidden: ClusterClass cannot be deleted because it is used by Cluster(s): ns/a',
        details: { name: 'cc', group: 'cluster.x-k8s.io', kind: 'clusterclasses', causes: [] },
      },
    });
    const created = await answer(review({ operation: 'CREATE', object: clusterClass([]) }), rules);
    expect(created.response).toEqual({ uid: 'u-1', allowed: true, warnings: ['careful'] });
  });

  it('refuses with 500 InternalError, naming the failure, when a rule cannot read what it needs', async () => {
    const rules: AdmissionValidators = {
      'cluster.x-k8s.io/ClusterClass': async () => {
        throw new Error('GET clusters: the API server answered 503');
      },
    };
    const { response } = await answer(review({ operation: 'CREATE', object: clusterClass([]) }), rules);
    expect(response).toEqual({
      uid: 'u-1',
      allowed: false,
      status: {
        code: 500,
        reason: 'InternalError',
        message: 'ClusterClass.cluster.x-k8s.io "cc" could not be validated: GET clusters: the API server answered 503',
      },
    });
  });

  it('allows operations it does not review, and refuses a kind sent to another kind\'s path', async () => {
    expect((await answer(review({ operation: 'CONNECT' }))).response.allowed).toBe(true);
    const other = await answer(review({ operation: 'CREATE', kind: { group: 'cluster.x-k8s.io', kind: 'Cluster' }, object: {} }));
    expect(other.response).toMatchObject({ allowed: false, status: { code: 400 } });
  });

  it.each([
    ['not a review', { kind: 'ConversionReview' }, 'expected an admission.k8s.io/v1 AdmissionReview'],
    ['no request', { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview' }, 'the AdmissionReview has no request'],
    ['no uid', review({ uid: '' }), 'the AdmissionReview request has no uid'],
    ['no object', review({ operation: 'CREATE' }), 'the CREATE review carries no object'],
    ['no oldObject', review({ operation: 'UPDATE', object: clusterClass([]) }), 'the UPDATE review carries no oldObject'],
    ['no oldObject to delete', review({ operation: 'DELETE' }), 'the DELETE review carries no oldObject'],
  ])('throws MalformedAdmissionReview for %s', async (_what, body, message) => {
    await expect(answer(body)).rejects.toThrow(new MalformedAdmissionReview(message));
  });
});

describe('the ValidatingWebhookConfiguration', () => {
  it('reaches the same Service or URL as the conversion, at a validation path', () => {
    expect(validationClientConfig({ service: { name: 's', namespace: 'n', path: '/convert', port: 443 } }, CLASS_PATH)).toEqual({
      service: { name: 's', namespace: 'n', path: '/validate-cluster-x-k8s-io-v1beta2-clusterclass', port: 443 },
    });
    expect(validationClientConfig({ url: 'https://127.0.0.1:9443/convert' }, CLASS_PATH)).toEqual({
      url: 'https://127.0.0.1:9443/validate-cluster-x-k8s-io-v1beta2-clusterclass',
    });
  });

  it('fails closed on ClusterClass CREATE, UPDATE and DELETE and on Cluster CREATE and UPDATE, with the CA bundle', () => {
    const webhooks = desiredValidatingWebhooks('CA', { url: 'https://h:1/convert' });
    const common = {
      clientConfig: { caBundle: Buffer.from('CA').toString('base64') },
      failurePolicy: 'Fail',
      sideEffects: 'None',
      admissionReviewVersions: ['v1'],
    };
    expect(webhooks).toMatchObject([
      {
        ...common,
        name: 'validation.clusterclass.cluster.x-k8s.io',
        clientConfig: { ...common.clientConfig, url: `https://h:1${CLASS_PATH}` },
        rules: [{ apiGroups: ['cluster.x-k8s.io'], apiVersions: ['v1beta2'], operations: ['CREATE', 'UPDATE', 'DELETE'], resources: ['clusterclasses'] }],
      },
      {
        ...common,
        name: 'validation.cluster.cluster.x-k8s.io',
        clientConfig: { ...common.clientConfig, url: 'https://h:1/validate-cluster-x-k8s-io-v1beta2-cluster' },
        rules: [{ apiGroups: ['cluster.x-k8s.io'], apiVersions: ['v1beta2'], operations: ['CREATE', 'UPDATE'], resources: ['clusters'] }],
      },
    ]);
    for (const webhook of webhooks) expect(webhook.timeoutSeconds).toBeLessThanOrEqual(10);
  });
});
