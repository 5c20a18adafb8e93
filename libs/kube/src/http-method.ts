/** The HTTP methods the Kubernetes API uses (client-node's enum has the same values; its module is not loaded for it). */
export const HttpMethod = {
  GET: 'GET',
  POST: 'POST',
  PUT: 'PUT',
  PATCH: 'PATCH',
  DELETE: 'DELETE',
} as const;
export type HttpMethod = (typeof HttpMethod)[keyof typeof HttpMethod];

/** The content types that select how the API server applies a PATCH. */
export const PatchStrategy = {
  JsonPatch: 'application/json-patch+json',
  MergePatch: 'application/merge-patch+json',
  StrategicMergePatch: 'application/strategic-merge-patch+json',
  ServerSideApply: 'application/apply-patch+yaml',
} as const;
export type PatchStrategy = (typeof PatchStrategy)[keyof typeof PatchStrategy];
