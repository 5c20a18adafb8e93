import { ForbiddenException } from '@nestjs/common';
import { describeAccess, type ResourceAttributes, type ReviewedUser } from '@capstan/observability';
import type { FleetAccess } from './fleet-access.js';

/**
 * Refuses with 403, naming the verb, resource and namespace the user lacks, unless RBAC lets `user` do what
 * `attributes` say: for what the dashboard reads with its own credentials (the shared informers, the event bus).
 */
export async function requireAccess(
  access: FleetAccess,
  user: ReviewedUser,
  attributes: ResourceAttributes,
): Promise<void> {
  if (!(await access.allowed(user, attributes)))
    throw new ForbiddenException(`${user.username} may not ${describeAccess(attributes)}`);
}
