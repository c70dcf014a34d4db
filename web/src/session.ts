/** The student page and the admin console keep their tokens apart (one tab may hold both). */
let TOKEN_KEY = 'enroll.token';
export function useTokenKey(key: string): void {
  TOKEN_KEY = key;
}

/**
 * The token comes from the page's fragment (`#token=…`, never sent to any server), is kept in
 * sessionStorage for this tab, and is removed from the address bar at once; `#lecture=42`
 * names a lecture to open, `#term=2027-spring` the term to show. Any may be combined:
 * `#term=2027-spring&lecture=42&token=…`.
 */
export function readFragment(): {
  token: string | null;
  lectureId: number | null;
  term: string | null;
} {
  const params = new URLSearchParams(location.hash.slice(1));
  const fromUrl = params.get('token');
  if (fromUrl) sessionStorage.setItem(TOKEN_KEY, fromUrl);
  const lecture = Number(params.get('lecture'));
  const lectureId = Number.isSafeInteger(lecture) && lecture > 0 ? lecture : null;
  const named = params.get('term');
  const term = named && /^[A-Za-z0-9_.-]{1,32}$/.test(named) ? named : null;
  if (fromUrl) history.replaceState(null, '', `${location.pathname}${location.search}${fragment(term, lectureId)}`); // prettier-ignore
  return { token: sessionStorage.getItem(TOKEN_KEY), lectureId, term };
}

/** The address bar's fragment for a term and a lecture (never the token). */
export function fragment(term: string | null, lectureId: number | null): string {
  const parts = [term ? `term=${term}` : '', lectureId ? `lecture=${lectureId}` : ''];
  const joined = parts.filter(Boolean).join('&');
  return joined ? `#${joined}` : '';
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
