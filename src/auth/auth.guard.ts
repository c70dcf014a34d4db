import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { AppError } from '../common/error-codes';
import { NotificationsService } from '../notifications/notifications.service';
import type { AuthedRequest } from './current-user.decorator';
import { PUBLIC_KEY, ROLES_KEY, Role } from './roles.decorator';
import { TokenVerifier } from './token-verifier';

/** Global guard: every route needs a valid bearer token unless marked @Public(). */
@Injectable()
export class AuthGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly verifier: TokenVerifier,
    private readonly notifications: NotificationsService,
  ) {}

  canActivate(ctx: ExecutionContext): boolean {
    const targets = [ctx.getHandler(), ctx.getClass()];
    if (this.reflector.getAllAndOverride<boolean>(PUBLIC_KEY, targets)) return true;

    const req = ctx
      .switchToHttp()
      .getRequest<AuthedRequest & { headers: Record<string, string | undefined> }>();
    const match = /^Bearer ([A-Za-z0-9_=-]+\.[A-Za-z0-9_=-]*\.[A-Za-z0-9_=-]*)$/.exec(
      req.headers.authorization ?? '',
    );
    if (!match) throw new AppError('UNAUTHORIZED', 'missing or malformed bearer token');
    const user = this.verifier.verify(match[1]);

    const roles = this.reflector.getAllAndOverride<Role[] | undefined>(ROLES_KEY, targets);
    if (roles && !roles.includes(user.role)) {
      throw new AppError('FORBIDDEN', `this route is for ${roles.join(' or ')} tokens`);
    }
    req.user = user;
    // Where this student's mails go: the last address a token of theirs carried (kept in
    // memory, written to PostgreSQL only when it changed).
    if (user.role === 'student' && user.email) this.notifications.noteEmail(user.id, user.email);
    return true;
  }
}
