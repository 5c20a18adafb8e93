import { isRecord } from '../contract/unstructured.js';
import { convertObject } from './convert.js';
import type { ApiVersionLookup } from './references.js';

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
export function answerConversionReview(body: unknown, lookup: ApiVersionLookup): ConversionReview {
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
    return {
      ...base,
      response: {
        uid,
        convertedObjects: objects.map((obj) => convertObject(obj, desired, lookup)),
        result: { status: 'Success' },
      },
    };
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    return { ...base, response: { uid, result: { status: 'Failure', message: `conversion to ${desired} failed: ${message}` } } };
  }
}
