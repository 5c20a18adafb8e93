import { createHash } from 'node:crypto';
import {
  createParamDecorator,
  ForbiddenException,
  Inject,
  Injectable,
  Optional,
  UnauthorizedException,
  type CanActivate,
  type ExecutionContext,
} from '@nestjs/common';
import {
  ACCESS_REVIEWS,
  type AccessQuestion,
  type AccessReviews,
  type NonResourceAttributes,
  type ResourceAttributes,
  type ReviewedUser,
} from './access-reviews.js';
import { ExpiringLru, type Clock } from './expiring-lru.js';

/**
 * The audience an admin API token must be issued for (`kubectl create token <account> --audience capstan-admin`): a
 * token the API server takes, such as any pod's mounted ServiceAccount token, is no admin token, so one that leaks
 * from a workload cannot be replayed here.
 */
export const ADMIN_API_AUDIENCE = 'capstan-admin';

/** The clock the admin guard's caches expire by (Nest token, optional: `Date.now` without it). Tests move it. */
export const ADMIN_AUTH_CLOCK = Symbol('ADMIN_AUTH_CLOCK');

/**
 * How long the guard trusts a review. Short enough that a revoked token or binding stops working within seconds (a
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

/** The caller the guard admitted, kept on the request for actions that must check more than the route. */
export interface AdminCaller {
  readonly user: ReviewedUser;
  /** Resolves if the caller may act on that object (a SubjectAccessReview, cached like the guard's), else 403. */
  authorize(resource: ResourceAttributes): Promise<void>;
}

/** A route that reads the caller without the guard in front: a wiring mistake, answered 500 rather than acted on. */
export class AdminCallerMissingError extends Error {
  constructor() {
    super('no admin caller on the request: the route is not behind KubernetesAdminGuard');
    this.name = 'AdminCallerMissingError';
  }
}

const ADMIN_CALLER = Symbol('capstan:admin-caller');

interface HttpRequestLike {
  method: string;
  path?: string;
  url: string;
  headers: Record<string, string | string[] | undefined>;
  [ADMIN_CALLER]?: AdminCaller;
}

/** The handler parameter of the caller KubernetesAdminGuard admitted. */
export const CurrentAdminCaller = createParamDecorator(
  (_data: unknown, context: ExecutionContext): AdminCaller => {
    const caller = context.switchToHttp().getRequest<HttpRequestLike>()[ADMIN_CALLER];
    if (!caller) throw new AdminCallerMissingError();
    return caller;
  },
);

/**
 * Admin routes trust the management cluster's own identities: the bearer token is checked with a
 * TokenReview for the admin audience and the caller's right to the route with a SubjectAccessReview on the non-resource URL, so
 * access is granted with ordinary RBAC (`nonResourceURLs: ["/admin/*"]`). Actions on an object ask again for that
 * object through the AdminCaller left on the request: the route alone says nothing about a namespace.
 */
@Injectable()
export class KubernetesAdminGuard implements CanActivate {
  // Keyed by the token's SHA-256, never the token. Refusals apart, so that a flood of bad tokens evicts no good one.
  private readonly acceptedTokens: ExpiringLru<ReviewedUser>;
  private readonly refusedTokens: ExpiringLru<true>;
  private readonly decisions: ExpiringLru<boolean>;

  constructor(
    @Inject(ACCESS_REVIEWS) private readonly reviews: AccessReviews,
    @Optional() @Inject(ADMIN_AUTH_CLOCK) now?: Clock,
  ) {
    const clock = now ?? Date.now;
    this.acceptedTokens = new ExpiringLru(ADMIN_AUTH_CACHE.maxEntries, clock);
    this.refusedTokens = new ExpiringLru(ADMIN_AUTH_CACHE.maxEntries, clock);
    this.decisions = new ExpiringLru(ADMIN_AUTH_CACHE.maxEntries, clock);
  }

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const request = context.switchToHttp().getRequest<HttpRequestLike>();
    const header = request.headers['authorization'];
    const token = typeof header === 'string' && header.startsWith('Bearer ') ? header.slice(7).trim() : '';
    if (!token) throw new UnauthorizedException('a bearer token is required');

    const user = await this.authenticate(token);
    if (!user) {
      throw new UnauthorizedException(`the Kubernetes API did not accept the token for the audience ${ADMIN_API_AUDIENCE}`);
    }
    const path = (request.path ?? request.url).split('?')[0]!;
    const verb = request.method === 'GET' || request.method === 'HEAD' ? 'get' : request.method.toLowerCase();
    if (!(await this.allowed(user, { nonResourceAttributes: { path, verb } }))) {
      throw new ForbiddenException(`${user.username} may not ${verb} ${path}`);
    }
    request[ADMIN_CALLER] = {
      user,
      authorize: async (resource) => {
        if (!(await this.allowed(user, { resourceAttributes: resource }))) {
          throw new ForbiddenException(`${user.username} may not ${describe(resource)}`);
        }
      },
    };
    return true;
  }

  private async authenticate(token: string): Promise<ReviewedUser | undefined> {
    const key = createHash('sha256').update(token).digest('hex');
    const known = this.acceptedTokens.get(key);
    if (known) return known;
    if (this.refusedTokens.get(key)) return undefined;
    const review = await this.reviews.reviewToken(token, [ADMIN_API_AUDIENCE]);
    // The API server answers with the audiences the token is valid for; an authenticator that cannot tell (a static
    // token file) is accepted only when the asked audience is the API server's own, which this one is not.
    const forAdmin = review?.authenticated === true && (review.audiences ?? []).includes(ADMIN_API_AUDIENCE);
    const reviewed = forAdmin ? review.user : undefined;
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

  private async allowed(
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
function describe(resource: ResourceAttributes): string {
  const kind = `${resource.resource}${resource.subresource ? `/${resource.subresource}` : ''}${resource.group ? `.${resource.group}` : ''}`;
  const object = resource.namespace
    ? `${resource.namespace}/${resource.name ?? '*'}`
    : (resource.name ?? '*');
  return `${resource.verb} ${kind} ${object}`;
}
