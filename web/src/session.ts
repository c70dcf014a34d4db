/** The student page and the admin console keep their tokens apart (one tab may hold both). */
let TOKEN_KEY = 'enroll.token';
export function useTokenKey(key: string): void {
  TOKEN_KEY = key;
}

/**
 * The token comes from the page's fragment (`#token=…`, never sent to any server), is kept in
 * sessionStorage for this tab, and is removed from the address bar at once; `#lecture=42`
 * names a lecture to open. Both may be given: `#lecture=42&token=…`.
 */
export function readFragment(): { token: string | null; lectureId: number | null } {
  const params = new URLSearchParams(location.hash.slice(1));
  const fromUrl = params.get('token');
  if (fromUrl) sessionStorage.setItem(TOKEN_KEY, fromUrl);
  const lecture = Number(params.get('lecture'));
  const lectureId = Number.isSafeInteger(lecture) && lecture > 0 ? lecture : null;
  if (fromUrl) {
    const rest = lectureId ? `#lecture=${lectureId}` : '';
    history.replaceState(null, '', `${location.pathname}${location.search}${rest}`);
  }
  return { token: sessionStorage.getItem(TOKEN_KEY), lectureId };
}

export function saveToken(token: string): void {
  sessionStorage.setItem(TOKEN_KEY, token);
}

export function forgetToken(): void {
  sessionStorage.removeItem(TOKEN_KEY);
}

/** The `sub` and `role` claims, read for display only (the service verifies the token). */
export function claims(token: string): { sub?: string; role?: string } {
  try {
    const part = token.split('.')[1].replace(/-/g, '+').replace(/_/g, '/');
    return JSON.parse(atob(part)) as { sub?: string; role?: string };
  } catch {
    return {};
  }
}
