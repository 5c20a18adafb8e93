import {
  createParamDecorator,
  Inject,
  Injectable,
  UnauthorizedException,
  type CanActivate,
  type ExecutionContext,
} from '@nestjs/common';
import { bearerToken, type ReviewedUser } from '@capstan/observability';
import { DASHBOARD_CALLERS, DASHBOARD_AUDIENCE, type DashboardCallers } from './dashboard-callers.js';

const DASHBOARD_USER = Symbol('capstan:dashboard-user');

interface RequestWithUser {
  headers: Record<string, string | string[] | undefined>;
  [DASHBOARD_USER]?: ReviewedUser;
}

/**
 * The dashboard's API trusts the management cluster's identities: every request carries the user's bearer token, a
 * token issued for the dashboard's own audience (`kubectl create token <account> --audience capstan-dashboard`), held
 * by the browser tab and sent as a header, never as a cookie, so another site cannot make the browser send it (no
 * CSRF) and the session ends with the token. What the user may see and do is RBAC's, asked per object.
 */
@Injectable()
export class DashboardAuthGuard implements CanActivate {
  constructor(@Inject(DASHBOARD_CALLERS) private readonly callers: DashboardCallers) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const request = context.switchToHttp().getRequest<RequestWithUser>();
    const token = bearerToken(request.headers['authorization']);
    if (!token) throw new UnauthorizedException('sign in: a bearer token is required');
    const user = await this.callers.reviews.authenticate(token);
    if (!user)
      throw new UnauthorizedException(
        `the Kubernetes API did not accept the token for the audience ${DASHBOARD_AUDIENCE} (expired, revoked, or issued for another audience)`,
      );
    request[DASHBOARD_USER] = user;
    return true;
  }
}

/** The handler parameter of the user DashboardAuthGuard admitted. */
export const DashboardUser = createParamDecorator(
  (_data: unknown, context: ExecutionContext): ReviewedUser => {
    const user = context.switchToHttp().getRequest<RequestWithUser>()[DASHBOARD_USER];
    // A route without the guard in front is a wiring mistake: refused, never served anonymously.
    if (!user) throw new UnauthorizedException('no signed-in user on the request');
    return user;
  },
);
