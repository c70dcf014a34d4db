import type { components } from './api-schema.js';

/** A contract error: `{ statusCode, code, message }`, with Retry-After when the service sent one. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly retryAfterSeconds?: number,
    /** TIME_CONFLICT, SAME_COURSE: the held lectures in the way */
    readonly conflictsWith: number[] = [],
    /** an import's VALIDATION_FAILED: every refused section */
    readonly errors: ImportError[] = [],
    /** COMPONENT_REQUIRED: a primary's secondary sections to choose from, by component */
    readonly components: Record<string, number[]> = {},
    /** FULL on a package: the section without a seat */
    readonly lectureId?: number,
    /** HOLD: the student's holds, each with what they are told */
    readonly holds: HoldBrief[] = [],
    /** WINDOW_NOT_OPEN: when the student's window opens (null: no window of theirs will) */
    readonly opensAt?: string | null,
  ) {
    super(message);
  }
}

// The service's own types, generated from the OpenAPI description it serves (api-schema.d.ts):
// nothing here is copied by hand, so a field the service changes is a compile error here.
type Schemas = components['schemas'];

/**
 * Read defensively until the generated types have them (API.md v4, automatic enrollment and
 * waitlists): optional here, so a service without them reads as "none".
 */
export type Lecture = Schemas['LectureView'] & {
  admission: Schemas['LectureView']['admission'] & { waitlist?: number };
};
/** GET /lectures/:id/stats, and each `event: stats` of the live stats stream. */
export type LectureStats = Schemas['LectureStats'] &
  Partial<Pick<Schemas['LiveStatsView'], 'admittedPerSecond'>>;
export type QueueStatus = Schemas['QueueStatusView'] & AutoFields;
/** Why the service gave a place up: its auto-enroll was refused (API.md v4). */
export type LastRefusal = { code: string; message: string; conflictsWith?: number[] };
/** What a status says of the service enrolling the student itself (API.md v4). */
type AutoFields = { autoEnroll?: boolean; lastRefusal?: LastRefusal | null };
export type Enrollment = Schemas['MyEnrollment'];
export type Meeting = Schemas['Meeting'];
export type Timetable = Schemas['TimetableView'];
export type TimetableItem = Schemas['TimetableItem'];
export type Plan = Schemas['PlanView'];
export type PlanQueueItem = Schemas['PlanQueueItem'] & AutoFields;
export type SectionsResult = Schemas['SectionsView'];
export type ImportReport = Schemas['ImportReportView'];
export type RosterItem = Schemas['RosterItem'];
/** One refused row of an import: a catalog's names its section (`ref`), a records import its `studentId`. */
export type ImportError = { row: number; ref?: string | null; studentId?: string | null; code: string; field: string | null; message: string }; // prettier-ignore
// Who may register when (API.md v4):
/** GET /me/terms/:term/registration: the student's status, on the service's clock. */
export type Registration = Schemas['RegistrationView'];
/** A hold as a HOLD refusal and the status name it; as the console lists it (with its student). */
export type HoldBrief = Registration['holds'][number];
export type Hold = Schemas['HoldView'];
/** GET and PUT /terms/:term/windows: a term's windows, in the order they are judged. */
export type TermWindows = Schemas['WindowsView'];
export type TermWindow = TermWindows['windows'][number];
/** PUT /terms/:term/students: what an import of students' records did (or would do). */
export type RecordsReport = Schemas['RecordsImportView'];

/** One JSON call with the bearer token in its header (never in the URL), and a JSON body. */
export async function call<T>(
  token: string,
  method: string,
  path: string,
  body?: unknown,
): Promise<T> {
  const headers: Record<string, string> = { Authorization: `Bearer ${token}` };
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  const json = body === undefined ? undefined : JSON.stringify(body);
  return answerOf<T>(await reach(path, { method, headers, body: json }));
}

/** A CSV body sent (the catalog import), a JSON answer read; errors as `call`'s. */
export async function sendCsv<T>(
  token: string,
  method: string,
  path: string,
  csv: string,
): Promise<T> {
  return answerOf<T>(
    await reach(path, { method, headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'text/csv' }, body: csv }), // prettier-ignore
  );
}

/** A CSV answer (`Accept: text/csv`): the catalog, a roster. */
export async function fetchCsv(token: string, path: string): Promise<string> {
  const res = await reach(path, { headers: { Authorization: `Bearer ${token}`, Accept: 'text/csv' } }); // prettier-ignore
  if (!res.ok) throw toError(res, await res.json().catch(() => ({})));
  return res.text();
}

async function reach(path: string, init: RequestInit): Promise<Response> {
  try {
    return await fetch(path, init);
  } catch {
    throw new ApiError(0, 'NETWORK', 'the service cannot be reached');
  }
}

async function answerOf<T>(res: Response): Promise<T> {
  if (res.status === 204) return undefined as T;
  const answer = await res.json().catch(() => ({}));
  if (!res.ok) throw toError(res, answer);
  return answer as T;
}

export function toError(
  res: Response,
  body: {
    code?: string;
    message?: string;
    conflictsWith?: number[];
    errors?: ImportError[];
    components?: Record<string, number[]>;
    lectureId?: number;
    holds?: HoldBrief[];
    opensAt?: string | null;
  },
): ApiError {
  const retry = Number(res.headers.get('Retry-After'));
  // No contract code (a proxy's error page, a 204 where JSON was due): unknown, and said so —
  // never in the words of a code the service did not send.
  return new ApiError(
    res.status,
    body.code ?? 'UNKNOWN',
    body.message ?? `HTTP ${res.status} ${res.statusText}`.trim(),
    Number.isFinite(retry) && retry > 0 ? retry : undefined,
    Array.isArray(body.conflictsWith) ? body.conflictsWith : [],
    Array.isArray(body.errors) ? body.errors : [],
    body.components && typeof body.components === 'object' ? body.components : {},
    typeof body.lectureId === 'number' ? body.lectureId : undefined,
    Array.isArray(body.holds) ? body.holds : [],
    typeof body.opensAt === 'string' || body.opensAt === null ? body.opensAt : undefined,
  );
}
