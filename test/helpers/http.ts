import { tokenFor } from './tokens';

export interface Reply {
  status: number;
  body: Record<string, unknown> & { code?: string };
}

/** fetch on a pooled keep-alive connection: for hundreds of parallel requests. */
export async function call(
  url: string,
  method: string,
  path: string,
  student: string,
): Promise<Reply> {
  const res = await fetch(`${url}${path}`, {
    method,
    headers: { Authorization: `Bearer ${tokenFor(student, 'student')}` },
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : {} };
}

/** Runs `fn` over `items` with at most `limit` in flight at once. */
export async function inParallel<T, R>(
  items: T[],
  limit: number,
  fn: (item: T) => Promise<R>,
): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i]);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}
