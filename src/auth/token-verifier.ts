import { createPublicKey, createSecretKey } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { JwtService } from '@nestjs/jwt';
import { LRUCache } from 'lru-cache';
import type { Algorithm } from 'jsonwebtoken';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { AppError } from '../common/error-codes';
import type { AuthUser } from './current-user.decorator';
import { ROLES, Role } from './roles.decorator';

export const SUB_PATTERN = /^[A-Za-z0-9_.:@-]{1,64}$/;
/**
 * An `email` claim worth mailing: one '@' between two non-empty parts, no white space, control
 * character or anything that would make it more than one address in a header; at most 254
 * characters (RFC 5321's path limit). Any other value is ignored, not refused: it is not the
 * token's identity.
 */
const EMAIL_PATTERN = /^[^\s\p{Cc}@<>()[\]\\,;:"]+@[^\s\p{Cc}@<>()[\]\\,;:"]+$/u;
const MAX_EMAIL_LENGTH = 254;
const ASYMMETRIC: Algorithm[] = ['RS256', 'ES256'];
/**
 * Tokens verified lately. A student's browser sends the same token with its join, its stream
 * and its enroll, and checking a signature is a tenth of a join's CPU: a token verified once
 * is the same bytes, signed by the same key, until its exp (checked on every use).
 */
const VERIFIED_CACHE_SIZE = 20_000;

type Verified = { user: AuthUser; expMs: number };

/** Verifies a bearer token exactly as API.md's Identity section says. */
@Injectable()
export class TokenVerifier {
  // Keys are parsed into KeyObjects once: given a string, jsonwebtoken tries to parse it as a
  // PEM public key on every verify and throws, which cost a quarter of the CPU of a join.
  private readonly hmac?: JwtService;
  private readonly asymmetric?: JwtService;
  private readonly verified = new LRUCache<string, Verified>({ max: VERIFIED_CACHE_SIZE });

  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    const { secret, publicKey } = config.jwt;
    if (secret) {
      this.hmac = new JwtService({
        secret: createSecretKey(Buffer.from(secret, 'utf8')),
        verifyOptions: { algorithms: ['HS256'] },
      });
    }
    if (publicKey) {
      this.asymmetric = new JwtService({
        publicKey: createPublicKey(publicKey),
        verifyOptions: { algorithms: ASYMMETRIC },
      });
    }
  }

  verify(token: string): AuthUser {
    const hit = this.verified.get(token);
    // jsonwebtoken's rule: expired once the current second reaches exp.
    if (hit && Math.floor(Date.now() / 1000) * 1000 < hit.expMs) return hit.user;
    if (hit) this.verified.delete(token);
    const verified = this.verifySignedToken(token);
    this.verified.set(token, verified);
    return verified.user;
  }

  private verifySignedToken(token: string): Verified {
    const alg = this.headerAlg(token);
    let payload: Record<string, unknown>;
    try {
      // Each key only ever verifies its own algorithm family: an HS256 token signed with the
      // public key as secret (the classic confusion attack) or `alg: none` is refused.
      if (alg === 'HS256' && this.hmac) {
        payload = this.hmac.verify(token);
      } else if (ASYMMETRIC.includes(alg as Algorithm) && this.asymmetric) {
        payload = this.asymmetric.verify(token);
      } else {
        throw new Error(`algorithm ${alg} is not accepted`);
      }
    } catch (err) {
      throw unauthorized(err instanceof Error ? err.message : 'invalid token');
    }
    const { sub, role, exp, email } = payload;
    if (typeof exp !== 'number') throw unauthorized('token has no exp claim');
    if (typeof sub !== 'string' || !SUB_PATTERN.test(sub)) {
      throw unauthorized('sub must be 1-64 characters of [A-Za-z0-9_.:@-]');
    }
    if (!ROLES.includes(role as Role)) throw unauthorized('role must be student or admin');
    const user: AuthUser = { id: sub, role: role as Role };
    if (saneEmail(email)) user.email = email;
    return { user, expMs: exp * 1000 };
  }

  private headerAlg(token: string): string {
    try {
      const header = JSON.parse(Buffer.from(token.split('.')[0], 'base64url').toString('utf8'));
      return typeof header?.alg === 'string' ? header.alg : 'missing';
    } catch {
      throw unauthorized('malformed token');
    }
  }
}

function saneEmail(email: unknown): email is string {
  return typeof email === 'string' && email.length <= MAX_EMAIL_LENGTH && EMAIL_PATTERN.test(email);
}

function unauthorized(reason: string): AppError {
  return new AppError('UNAUTHORIZED', `invalid bearer token: ${reason}`);
}
