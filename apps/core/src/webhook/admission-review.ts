import { CLUSTER_API_GROUP, findResource } from '@capstan/api';
import type { AdmissionVerdict } from './admission-verdict.js';

// The core's validating admission webhook: admission.k8s.io/v1 AdmissionReviews in and out, for the kinds whose rules
// go beyond what CEL can check in the API server (admission-validators.ts says which).

/** Where the API server sends ClusterClass reviews (upstream's path, so its manifests name the same one). */
export const CLUSTER_CLASS_VALIDATION_PATH = '/validate-cluster-x-k8s-io-v1beta2-clusterclass';
/** Where the API server sends Cluster reviews (upstream's path). */
export const CLUSTER_VALIDATION_PATH = '/validate-cluster-x-k8s-io-v1beta2-cluster';

/** The kind each validation path takes, by `group/Kind`. */
export const VALIDATION_PATHS: Readonly<Record<string, string>> = {
  [CLUSTER_CLASS_VALIDATION_PATH]: `${CLUSTER_API_GROUP}/ClusterClass`,
  [CLUSTER_VALIDATION_PATH]: `${CLUSTER_API_GROUP}/Cluster`,
};

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
  warnings?: string[];
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

/** One write under review: `object` is unset for DELETE, `oldObject` for CREATE. */
export interface ReviewedWrite {
  operation: 'CREATE' | 'UPDATE' | 'DELETE';
  object?: Obj;
  oldObject?: Obj;
}

/** A validator of one kind. */
export type KindValidator = (write: ReviewedWrite) => Promise<AdmissionVerdict>;

/** The validators by `group/Kind`. */
export type AdmissionValidators = Readonly<Record<string, KindValidator>>;

/**
 * Answers an AdmissionReview sent to `path`: a write of the path's kind is allowed only without problems (other
 * operations are allowed). A refusal is a 422 Invalid status whose message lists `path: rule` (never values), as
 * upstream's `apierrors.NewInvalid`, or 403 Forbidden for a write not allowed now; a validator that could not read
 * what it needs answers 500 InternalError. Throws MalformedAdmissionReview for a body that is no review.
 */
export async function answerAdmissionReview(
  body: unknown,
  path: string,
  validators: AdmissionValidators,
): Promise<AdmissionReviewAnswer> {
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
  if (operation !== 'CREATE' && operation !== 'UPDATE' && operation !== 'DELETE') return answer({ allowed: true });

  const kind = isObject(request['kind']) ? request['kind'] : {};
  const group = typeof kind['group'] === 'string' ? kind['group'] : '';
  const kindName = typeof kind['kind'] === 'string' ? kind['kind'] : '';
  const validate = VALIDATION_PATHS[path] === `${group}/${kindName}` ? validators[`${group}/${kindName}`] : undefined;
  if (!validate)
    return answer({
      allowed: false,
      status: { code: 400, reason: 'BadRequest', message: `this webhook does not validate ${kindName || 'that kind'} at ${path}` },
    });
  const object = request['object'];
  if (operation !== 'DELETE' && !isObject(object)) throw new MalformedAdmissionReview(`the ${operation} review carries no object`);
  const oldObject = request['oldObject'];
  if (operation !== 'CREATE' && !isObject(oldObject)) throw new MalformedAdmissionReview(`the ${operation} review carries no oldObject`);

  const subject = operation === 'DELETE' ? oldObject : object;
  const metadata = isObject(subject) && isObject(subject['metadata']) ? subject['metadata'] : {};
  const name = typeof metadata['name'] === 'string' ? metadata['name'] : typeof request['name'] === 'string' ? request['name'] : '';
  let verdict: AdmissionVerdict;
  try {
    verdict = await validate({
      operation,
      ...(isObject(object) ? { object } : {}),
      ...(operation !== 'CREATE' && isObject(oldObject) ? { oldObject } : {}),
    });
  } catch (error) {
    // A read the rules need failed (the API server slow or refusing): refused, saying which kind of failure.
    return answer({
      allowed: false,
      status: {
        code: 500,
        reason: 'InternalError',
        message: `${kindName}.${group} "${name}" could not be validated: ${error instanceof Error ? error.message : String(error)}`,
      },
    });
  }
  const warnings = verdict.warnings.length > 0 ? { warnings: verdict.warnings } : {};
  if (verdict.forbidden !== undefined) {
    const plural = findResource(group, kindName)?.plural ?? kindName.toLowerCase();
    return answer({
      allowed: false,
      ...warnings,
      status: {
        code: 403,
        reason: 'Forbidden',
        message: `${plural}.${group} "${name}" is forbidden: ${verdict.forbidden}`,
        details: { ...(name ? { name } : {}), group, kind: plural, causes: [] },
      },
    });
  }
  const issues = verdict.issues;
  if (issues.length === 0) return answer({ allowed: true, ...warnings });
  const listed = issues.map((issue) => `${issue.path}: ${issue.message}`);
  return answer({
    allowed: false,
    ...warnings,
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
