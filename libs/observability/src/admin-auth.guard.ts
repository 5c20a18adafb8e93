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
import { ACCESS_REVIEWS, type AccessReviews, type ResourceAttributes, type ReviewedUser } from './access-reviews.js';
import { bearerToken, CallerReviews, describeAccess } from './caller-reviews.js';
import type { Clock } from './expiring-lru.js';

/**
 * The audience an admin API token must be issued for (`kubectl create token <account> --audience capstan-admin`): a
 * token the API server takes, such as any pod's mounted ServiceAccount token, is no admin token, so one that leaks
 * from a workload cannot be replayed here.
 */
export const ADMIN_API_AUDIENCE = 'capstan-admin';

/** The clock the admin guard's caches expire by (Nest token, optional: `Date.now` without it). Tests move it. */
export const ADMIN_AUTH_CLOCK = Symbol('ADMIN_AUTH_CLOCK');

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
  private readonly callers: CallerReviews;

  constructor(
    @Inject(ACCESS_REVIEWS) reviews: AccessReviews,
    @Optional() @Inject(ADMIN_AUTH_CLOCK) now?: Clock,
  ) {
    this.callers = new CallerReviews(reviews, ADMIN_API_AUDIENCE, now);
  }

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const request = context.switchToHttp().getRequest<HttpRequestLike>();
    const token = bearerToken(request.headers['authorization']);
    if (!token) throw new UnauthorizedException('a bearer token is required');

    const user = await this.callers.authenticate(token);
    if (!user) {
      throw new UnauthorizedException(`the Kubernetes API did not accept the token for the audience ${ADMIN_API_AUDIENCE}`);
    }
    const path = (request.path ?? request.url).split('?')[0]!;
    const verb = request.method === 'GET' || request.method === 'HEAD' ? 'get' : request.method.toLowerCase();
    if (!(await this.callers.allowed(user, { nonResourceAttributes: { path, verb } }))) {
      throw new ForbiddenException(`${user.username} may not ${verb} ${path}`);
    }
    request[ADMIN_CALLER] = {
      user,
      authorize: async (resource) => {
        if (!(await this.callers.allowed(user, { resourceAttributes: resource }))) {
          throw new ForbiddenException(`${user.username} may not ${describeAccess(resource)}`);
        }
      },
    };
    return true;
  }
}
