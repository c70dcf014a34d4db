import { SetMetadata } from '@nestjs/common';

export type Role = 'student' | 'admin';
export const ROLES: readonly Role[] = ['student', 'admin'];

export const ROLES_KEY = 'roles';
export const PUBLIC_KEY = 'public';

/** Only tokens with one of these roles may call the route. */
export const Roles = (...roles: Role[]) => SetMetadata(ROLES_KEY, roles);

/** No token needed (health, metrics, docs). Every other route requires one. */
export const Public = () => SetMetadata(PUBLIC_KEY, true);
