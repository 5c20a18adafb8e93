import { isRecord, type Unstructured } from '../contract/unstructured.js';
import { ConversionError } from './conversion-error.js';
import { convertObject } from './convert.js';

/** Finds the `group/version` for a referenced kind (reading its CRD's contract label); rejects with a ConversionError. */
export type ApiVersionResolver = (groupKind: { group: string; kind: string }) => Promise<string>;

export interface ConversionReviewOptions {
  resolve: ApiVersionResolver;
  /**
   * Problems of an object converted into the storage version (validation the API server does not run on it, as it
   * validates the version the client sent): any makes the conversion fail with them.
   */
  check?: (converted: Unstructured) => string[];
}

/**
 * One object into `desired`: the kinds its references name are resolved first (a dry run records them), so the
 * conversion itself stays synchronous.
 */
async function convertResolved(obj: unknown, desired: string, resolve: ApiVersionResolver): Promise<Unstructured> {
  const needed = new Map<string, { group: string; kind: string }>();
  try {
    convertObject(obj, desired, (gk) => {
      needed.set(`${gk.kind}.${gk.group}`, gk);
      return `${gk.group}/v0`;
    });
  } catch {
    // The real conversion below reports it.
  }
  const resolved = new Map<string, string>();
  for (const [key, gk] of needed) resolved.set(key, await resolve(gk));
  return convertObject(obj, desired, (gk) => {
    const apiVersion = resolved.get(`${gk.kind}.${gk.group}`);
    if (!apiVersion) throw new ConversionError(`no API version found for ${gk.kind}.${gk.group}`);
    return apiVersion;
  });
}

/** An apiextensions.k8s.io/v1 ConversionReview as the API server sends it and as the webhook answers it. */
export interface ConversionReview {
  apiVersion: 'apiextensions.k8s.io/v1';
  kind: 'ConversionReview';
  request?: { uid: string; desiredAPIVersion: string; objects: unknown[] };
  response?: {
    uid: string;
    convertedObjects?: unknown[];
    result: { status: 'Success' | 'Failure'; message?: string };
  };
}

export class MalformedConversionReview extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'MalformedConversionReview';
  }
}

/**
 * The webhook's answer to a review: every object converted, or a Failure naming the first object and field that
 * could not be (the API server then fails the request with that message). A body that is not a review with a
 * request throws MalformedConversionReview (HTTP 400).
 */
export async function answerConversionReview(body: unknown, options: ConversionReviewOptions): Promise<ConversionReview> {
  const request = isRecord(body) ? body['request'] : undefined;
  if (
    !isRecord(body) ||
    body['kind'] !== 'ConversionReview' ||
    !isRecord(request) ||
    typeof request['uid'] !== 'string' ||
    typeof request['desiredAPIVersion'] !== 'string' ||
    !Array.isArray(request['objects'])
  ) {
    throw new MalformedConversionReview('the body is not a ConversionReview with a request (uid, desiredAPIVersion, objects)');
  }
  const uid = request['uid'];
  const desired = request['desiredAPIVersion'];
  const objects = request['objects'];
  const base = { apiVersion: 'apiextensions.k8s.io/v1', kind: 'ConversionReview' } as const;
  try {
    const convertedObjects: Unstructured[] = [];
    for (const obj of objects) {
      const converted = await convertResolved(obj, desired, options.resolve);
      const problems = options.check?.(converted) ?? [];
      if (problems.length > 0) {
        const name = isRecord(converted['metadata']) ? converted['metadata']['name'] : undefined;
        throw new ConversionError(`${String(converted['kind'])} ${String(name ?? '')} is invalid: ${problems.join('; ')}`);
      }
      convertedObjects.push(converted);
    }
    return { ...base, response: { uid, convertedObjects, result: { status: 'Success' } } };
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    return { ...base, response: { uid, result: { status: 'Failure', message: `conversion to ${desired} failed: ${message}` } } };
  }
}
