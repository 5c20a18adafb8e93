import { CLUSTER_API_GROUP, validateClusterClass, type ValidationIssue } from '@capstan/api';

// The core's validating admission webhook: admission.k8s.io/v1 AdmissionReviews in and out, for the kinds whose rules
// go beyond what CEL can check in the API server (ClusterClass: libs/api/src/validation/cluster-class-validation.ts).

/** Where the API server sends ClusterClass reviews (upstream's path, so its manifests name the same one). */
export const CLUSTER_CLASS_VALIDATION_PATH = '/validate-cluster-x-k8s-io-v1beta2-clusterclass';

const ADMISSION_API_VERSION = 'admission.k8s.io/v1';

/** A review that is not an admission.k8s.io/v1 AdmissionReview this webhook can answer: the API server gets a 400. */
export class MalformedAdmissionReview extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'MalformedAdmissionReview';
  }
}

export interface AdmissionResponse {
  uid: string;
  allowed: boolean;
  status?: {
    code: number;
    reason: string;
    message: string;
    details?: { name?: string; group: string; kind: string; causes: { field: string; message: string; reason: string }[] };
  };
}

export interface AdmissionReviewAnswer {
  apiVersion: typeof ADMISSION_API_VERSION;
  kind: 'AdmissionReview';
  response: AdmissionResponse;
}

type Obj = Record<string, unknown>;
const isObject = (value: unknown): value is Obj => typeof value === 'object' && value !== null && !Array.isArray(value);

/** The namespace and name a review is about, for logs (undefined parts when the review does not say). */
export function admissionSubject(body: unknown): { namespace?: string; name?: string } {
  const request = isObject(body) && isObject(body['request']) ? body['request'] : {};
  const object = isObject(request['object']) ? request['object'] : {};
  const metadata = isObject(object['metadata']) ? object['metadata'] : {};
  const text = (value: unknown) => (typeof value === 'string' && value !== '' ? value : undefined);
  return { namespace: text(request['namespace']), name: text(request['name']) ?? text(metadata['name']) };
}

/** A validator of one kind: the problems of the object a CREATE or UPDATE would store. */
type KindValidator = (object: unknown, oldObject: unknown) => ValidationIssue[];

/** The kinds this webhook validates, by `group/Kind`. */
const VALIDATORS: Readonly<Record<string, KindValidator>> = {
  [`${CLUSTER_API_GROUP}/ClusterClass`]: (object) => validateClusterClass(object),
};

/**
 * Answers an AdmissionReview: CREATE and UPDATE of a validated kind are allowed only without problems; other
 * operations are allowed. A refusal is a 422 Invalid status whose message lists `path: rule` (never values), as
 * upstream's `apierrors.NewInvalid`. Throws MalformedAdmissionReview for a body that is no review.
 */
export function answerAdmissionReview(body: unknown): AdmissionReviewAnswer {
  if (!isObject(body) || body['kind'] !== 'AdmissionReview' || body['apiVersion'] !== ADMISSION_API_VERSION)
    throw new MalformedAdmissionReview(`expected an ${ADMISSION_API_VERSION} AdmissionReview`);
  const request = body['request'];
  if (!isObject(request)) throw new MalformedAdmissionReview('the AdmissionReview has no request');
  const uid = request['uid'];
  if (typeof uid !== 'string' || uid === '') throw new MalformedAdmissionReview('the AdmissionReview request has no uid');
  const answer = (response: Omit<AdmissionResponse, 'uid'>): AdmissionReviewAnswer => ({
    apiVersion: ADMISSION_API_VERSION,
    kind: 'AdmissionReview',
    response: { uid, ...response },
  });
  const operation = request['operation'];
  if (operation !== 'CREATE' && operation !== 'UPDATE') return answer({ allowed: true });

  const kind = isObject(request['kind']) ? request['kind'] : {};
  const group = typeof kind['group'] === 'string' ? kind['group'] : '';
  const kindName = typeof kind['kind'] === 'string' ? kind['kind'] : '';
  const validate = VALIDATORS[`${group}/${kindName}`];
  if (!validate)
    return answer({
      allowed: false,
      status: { code: 400, reason: 'BadRequest', message: `this webhook does not validate ${kindName || 'that kind'}` },
    });
  const object = request['object'];
  if (!isObject(object)) throw new MalformedAdmissionReview(`the ${operation} review carries no object`);
  const oldObject = request['oldObject'];
  if (operation === 'UPDATE' && !isObject(oldObject)) throw new MalformedAdmissionReview('the UPDATE review carries no oldObject');

  const issues = validate(object, oldObject);
  if (issues.length === 0) return answer({ allowed: true });
  const metadata = isObject(object['metadata']) ? object['metadata'] : {};
  const name = typeof metadata['name'] === 'string' ? metadata['name'] : typeof request['name'] === 'string' ? request['name'] : '';
  const listed = issues.map((issue) => `${issue.path}: ${issue.message}`);
  return answer({
    allowed: false,
    status: {
      code: 422,
      reason: 'Invalid',
      message: `${kindName}.${group} "${name}" is invalid: ${listed.length === 1 ? listed[0]! : `[${listed.join(', ')}]`}`,
      details: {
        ...(name ? { name } : {}),
        group,
        kind: kindName,
        causes: issues.map((issue) => ({ field: issue.path, message: issue.message, reason: 'FieldValueInvalid' })),
      },
    },
  });
}
