/**
 * Who a client acts as through Kubernetes impersonation (the dashboard acting for a signed-in user): the API server
 * authorizes each request as this user, with RBAC, and audits it under both names. The client's own identity needs
 * the `impersonate` verb on users, groups, uids and user extras.
 */
export interface ImpersonatedUser {
  username: string;
  uid?: string;
  groups?: readonly string[];
  extra?: Readonly<Record<string, readonly string[]>>;
}

/** Header names and values as undici sends them: a list is the same header repeated. */
export type RequestHeaders = Record<string, string | string[]>;

/** The `Impersonate-*` headers (client-go's): one `Impersonate-Group` per group, extras keyed by their escaped name. */
export function impersonationHeaders(user: ImpersonatedUser): RequestHeaders {
  const headers: RequestHeaders = { 'Impersonate-User': user.username };
  if (user.uid) headers['Impersonate-Uid'] = user.uid;
  if (user.groups && user.groups.length > 0) headers['Impersonate-Group'] = [...user.groups];
  for (const [key, values] of Object.entries(user.extra ?? {}))
    // Header names are case-insensitive and limited to token characters: the key is percent-encoded as client-go does.
    if (values.length > 0) headers[`Impersonate-Extra-${encodeURIComponent(key)}`] = [...values];
  return headers;
}
