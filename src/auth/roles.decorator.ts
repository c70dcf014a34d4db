import { SetMetadata, applyDecorators } from '@nestjs/common';
import { ApiExtension } from '@nestjs/swagger';

export type Role = 'student' | 'admin';
export const ROLES: readonly Role[] = ['student', 'admin'];

export const ROLES_KEY = 'roles';
export const PUBLIC_KEY = 'public';

/** Only tokens with one of these roles may call the route; the OpenAPI description says which. */
export const Roles = (...roles: Role[]) =>
  applyDecorators(SetMetadata(ROLES_KEY, roles), ApiExtension('x-roles', roles));

/**
 * No token needed (health, metrics, docs). Every other route requires one. The OpenAPI
 * description drops the bearer requirement for it (docs/openapi.ts reads the extension).
 */
export const Public = () =>
  applyDecorators(SetMetadata(PUBLIC_KEY, true), ApiExtension('x-public', true));
