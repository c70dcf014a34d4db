/** A contract error: `{ statusCode, code, message }`, with Retry-After when the service sent one. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
  }
}

export interface Lecture {
  id: number;
  title: string;
  capacity: number;
  seatsLeft: number;
  opensAt: string;
  closesAt: string | null;
  status: 'SCHEDULED' | 'OPEN' | 'FULL' | 'CLOSED';
  admission: {
    batchSize: number;
    ticketTtlSeconds: number;
    maxActiveTickets: number;
    preQueueMinutes: number;
  };
}

/** GET /lectures/:id/stats, and each `event: stats` of the live stats stream. */
export interface LectureStats {
  waiting: number;
  activeTickets: number;
  enrolled: number;
  seatsLeft: number;
  admittedTotal: number;
  preQueued: number;
  /** live stream only: admissions per second over the last 10 s */
  admittedPerSecond?: number;
}

export interface QueueStatus {
  lectureId: number;
  status: 'WAITING' | 'ADMITTED' | 'ENROLLED' | 'NOT_QUEUED' | 'PRE_QUEUED';
  position: number | null;
  waiting: number;
  estimatedWaitSeconds: number | null;
  ticketExpiresAt: string | null;
  seatsLeft: number;
}

export interface Enrollment {
  lectureId: number;
  title: string;
  enrolledAt: string;
}

/** One JSON call with the bearer token in its header (never in the URL), and a JSON body. */
export async function call<T>(
  token: string,
  method: string,
  path: string,
  body?: unknown,
): Promise<T> {
  let res: Response;
  const headers: Record<string, string> = { Authorization: `Bearer ${token}` };
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  try {
    res = await fetch(path, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch {
    throw new ApiError(0, 'NETWORK', 'the service cannot be reached');
  }
  if (res.status === 204) return undefined as T;
  const answer = await res.json().catch(() => ({}));
  if (!res.ok) throw toError(res, answer);
  return answer as T;
}

export function toError(res: Response, body: { code?: string; message?: string }): ApiError {
  const retry = Number(res.headers.get('Retry-After'));
  return new ApiError(
    res.status,
    body.code ?? 'UNAVAILABLE',
    body.message ?? res.statusText,
    Number.isFinite(retry) && retry > 0 ? retry : undefined,
  );
}
