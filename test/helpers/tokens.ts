import { sign, SignOptions } from 'jsonwebtoken';

export const TEST_JWT_SECRET = 'test-secret-that-is-long-enough';

export function tokenFor(
  sub: string,
  role: 'student' | 'admin' = 'student',
  options: SignOptions = { expiresIn: '1h' },
  secret = TEST_JWT_SECRET,
): string {
  return sign({ sub, role }, secret, { algorithm: 'HS256', ...options });
}

export const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });
export const adminHeaders = () => bearer(tokenFor('admin-1', 'admin'));
export const studentHeaders = (sub = 'student-1') => bearer(tokenFor(sub, 'student'));
