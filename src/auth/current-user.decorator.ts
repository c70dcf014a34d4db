import { createParamDecorator, ExecutionContext } from '@nestjs/common';
import type { Role } from './roles.decorator';

export interface AuthUser {
  id: string;
  role: Role;
  /** the token's `email` claim, when it carried a sane one (where notifications are mailed) */
  email?: string;
}

export type AuthedRequest = { user?: AuthUser };

/** The caller, as the JWT guard verified it. The user id never comes from a body or query. */
export const CurrentUser = createParamDecorator((_data: unknown, ctx: ExecutionContext) => {
  return ctx.switchToHttp().getRequest<AuthedRequest>().user as AuthUser;
});
