import {
  ForbiddenException,
  Inject,
  Injectable,
  UnauthorizedException,
  type CanActivate,
  type ExecutionContext,
} from '@nestjs/common';
import { ACCESS_REVIEWS, type AccessReviews } from './access-reviews.js';

interface HttpRequestLike {
  method: string;
  path?: string;
  url: string;
  headers: Record<string, string | string[] | undefined>;
}

/**
 * Admin routes trust the management cluster's own identities: the bearer token is checked with a
 * TokenReview and the caller's right to the route with a SubjectAccessReview on the non-resource URL, so
 * access is granted with ordinary RBAC (`nonResourceURLs: ["/admin/*"]`).
 */
@Injectable()
export class KubernetesAdminGuard implements CanActivate {
  constructor(@Inject(ACCESS_REVIEWS) private readonly reviews: AccessReviews) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const request = context.switchToHttp().getRequest<HttpRequestLike>();
    const header = request.headers['authorization'];
    const token = typeof header === 'string' && header.startsWith('Bearer ') ? header.slice(7).trim() : '';
    if (!token) throw new UnauthorizedException('a bearer token is required');

    const review = await this.reviews.reviewToken(token);
    if (!review?.authenticated || !review.user?.username) {
      throw new UnauthorizedException('the token was not accepted by the Kubernetes API');
    }
    const user = review.user;
    const username = review.user.username;
    const path = (request.path ?? request.url).split('?')[0]!;
    const verb = request.method === 'GET' || request.method === 'HEAD' ? 'get' : request.method.toLowerCase();
    const access = await this.reviews.reviewAccess({
      user: username,
      groups: user.groups,
      uid: user.uid,
      extra: user.extra,
      nonResourceAttributes: { path, verb },
    });
    if (!access?.allowed) {
      throw new ForbiddenException(`${username} may not ${verb} ${path}`);
    }
    return true;
  }
}
