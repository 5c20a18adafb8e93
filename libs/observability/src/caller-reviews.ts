import { createHash } from 'node:crypto';
import type {
  AccessQuestion,
  AccessReviews,
  NonResourceAttributes,
  ResourceAttributes,
  ReviewedUser,
} from './access-reviews.js';
import { ExpiringLru, type Clock } from './expiring-lru.js';

/**
 * How long a review is trusted (the admin API's and the dashboard's callers). Short enough that a revoked token or binding stops working within seconds (a
 * token's expiry is outlived by 10 s at most); long enough that a burst of admin requests costs one review. Refusals
 * and denials are kept shorter: a bad token is retried cheaply, and a caller just granted access waits 2 s at most.
 */
export const ADMIN_AUTH_CACHE = {
  maxEntries: 1000,
  acceptedTokenMs: 10_000,
  refusedTokenMs: 2_000,
  allowedMs: 10_000,
  deniedMs: 2_000,
} as const;

/**
 * Callers of an HTTP API that trusts the management cluster's own identities: a bearer token is checked with a
 * TokenReview for the API's own audience (a token the API server takes, such as a pod's mounted ServiceAccount token,
 * is refused, so one that leaks from a workload cannot be replayed), and what the caller may do with a
 * SubjectAccessReview. Both are cached (ADMIN_AUTH_CACHE) and bounded.
 */
export class CallerReviews {
  // Keyed by the token's SHA-256, never the token. Refusals apart, so that a flood of bad tokens evicts no good one.
  private readonly acceptedTokens: ExpiringLru<ReviewedUser>;
  private readonly refusedTokens: ExpiringLru<true>;
  private readonly decisions: ExpiringLru<boolean>;

  constructor(
    private readonly reviews: AccessReviews,
    readonly audience: string,
    now: Clock = Date.now,
  ) {
    this.acceptedTokens = new ExpiringLru(ADMIN_AUTH_CACHE.maxEntries, now);
    this.refusedTokens = new ExpiringLru(ADMIN_AUTH_CACHE.maxEntries, now);
    this.decisions = new ExpiringLru(ADMIN_AUTH_CACHE.maxEntries, now);
  }

  /** The user the token stands for, if the API server accepts it for this audience. */
  async authenticate(token: string): Promise<ReviewedUser | undefined> {
    const key = createHash('sha256').update(token).digest('hex');
    const known = this.acceptedTokens.get(key);
    if (known) return known;
    if (this.refusedTokens.get(key)) return undefined;
    const review = await this.reviews.reviewToken(token, [this.audience]);
    // The API server answers with the audiences the token is valid for; an authenticator that cannot tell (a static
    // token file) is accepted only when the asked audience is the API server's own, which this one is not.
    const forUs = review?.authenticated === true && (review.audiences ?? []).includes(this.audience);
    const reviewed = forUs ? review.user : undefined;
    if (!reviewed?.username) {
      this.refusedTokens.set(key, true, ADMIN_AUTH_CACHE.refusedTokenMs);
      return undefined;
    }
    const user: ReviewedUser = {
      username: reviewed.username,
      uid: reviewed.uid,
      groups: reviewed.groups,
      extra: reviewed.extra,
    };
    this.acceptedTokens.set(key, user, ADMIN_AUTH_CACHE.acceptedTokenMs);
    return user;
  }

  /** Whether `user` may do what `attributes` say (a SubjectAccessReview). */
  async allowed(
    user: ReviewedUser,
    attributes: { nonResourceAttributes: NonResourceAttributes } | { resourceAttributes: ResourceAttributes },
  ): Promise<boolean> {
    const question: AccessQuestion = {
      user: user.username,
      uid: user.uid,
      groups: user.groups,
      extra: user.extra,
      ...attributes,
    };
    const key = decisionKey(question);
    const known = this.decisions.get(key);
    if (known !== undefined) return known;
    const allowed = (await this.reviews.reviewAccess(question))?.allowed === true;
    this.decisions.set(key, allowed, allowed ? ADMIN_AUTH_CACHE.allowedMs : ADMIN_AUTH_CACHE.deniedMs);
    return allowed;
  }
}

/** The token of an `Authorization: Bearer ...` header, or '' without one. */
export function bearerToken(header: string | string[] | undefined): string {
  return typeof header === 'string' && header.startsWith('Bearer ') ? header.slice(7).trim() : '';
}

/** Everything the answer depends on, in a fixed order (groups and extra sorted), hashed to bound the key's size. */
function decisionKey(question: AccessQuestion): string {
  const resource = question.resourceAttributes;
  const canonical = [
    question.user,
    question.uid ?? '',
    [...(question.groups ?? [])].sort(),
    Object.entries(question.extra ?? {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
    question.nonResourceAttributes
      ? ['url', question.nonResourceAttributes.path, question.nonResourceAttributes.verb]
      : [
          'object',
          resource?.group,
          resource?.resource,
          resource?.subresource ?? '',
          resource?.verb,
          resource?.namespace ?? '',
          resource?.name ?? '',
        ],
  ];
  return createHash('sha256').update(JSON.stringify(canonical)).digest('hex');
}

/** `patch clusters.cluster.x-k8s.io ns/name`, as a 403 names what was refused. */
export function describeAccess(resource: ResourceAttributes): string {
  const kind = `${resource.resource}${resource.subresource ? `/${resource.subresource}` : ''}${resource.group ? `.${resource.group}` : ''}`;
  const object = resource.namespace
    ? `${resource.namespace}/${resource.name ?? '*'}`
    : (resource.name ?? '*');
  return `${resource.verb} ${kind} ${object}`;
}
