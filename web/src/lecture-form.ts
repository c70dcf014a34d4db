import { ApiError, Lecture } from './api.js';
import { toIso, toLocal } from './local-time.js';

/** The form's fields: the Lecture body of POST/PATCH /lectures, admission settings nested. */
const NUMBERS = ['capacity', 'credits'] as const;
const ADMISSION = ['batchSize', 'ticketTtlSeconds', 'maxActiveTickets', 'preQueueMinutes'] as const;
/** Text fields of the timetable: empty is null (none) on edit, left out on create. */
const TEXTS = ['courseCode', 'instructor', 'location'] as const;
const FIELDS = ['title', 'capacity', 'opensAt', 'closesAt', 'term', ...TEXTS, 'credits', 'meetings', ...ADMISSION] as const; // prettier-ignore
type Field = (typeof FIELDS)[number];

const input = (form: HTMLFormElement, name: Field) =>
  form.elements.namedItem(name) as HTMLInputElement;

/** Fills the form with a lecture to edit, or empties it for a new one. */
export function fillForm(form: HTMLFormElement, l: Lecture | null): void {
  clearFieldErrors(form);
  input(form, 'title').value = l?.title ?? '';
  input(form, 'capacity').value = l ? String(l.capacity) : '';
  input(form, 'opensAt').value = toLocal(l?.opensAt ?? null);
  input(form, 'closesAt').value = toLocal(l?.closesAt ?? null);
  for (const f of ADMISSION) input(form, f).value = l ? String(l.admission[f]) : '';
  input(form, 'term').value = l?.term ?? '';
  input(form, 'credits').value = l ? String(l.credits) : '';
  for (const f of TEXTS) input(form, f).value = l?.[f] ?? '';
  input(form, 'meetings').value = (l?.meetings ?? [])
    .map(
      (m) =>
        `${m.day} ${m.start}-${m.end}${m.from || m.until ? ` ${m.from ?? ''}..${m.until ?? ''}` : ''}`,
    ) // prettier-ignore
    .join(', ');
}

const MEETING_TEXT =
  /^([A-Za-z]{3})\s+(\d{1,2}:\d{2})\s*[-–]\s*(\d{1,2}:\d{2})(?:\s+(\d{4}-\d{2}-\d{2})?\.\.(\d{4}-\d{2}-\d{2})?)?$/;

/**
 * "MON 09:00-10:15 2027-01-11..2027-03-05, WED 09:00-10:15" as the contract's meetings (the
 * dates optional, either side open); a bad item is left for the service to name.
 */
function parseMeetings(text: string): unknown[] {
  return text
    .split(',')
    .map((part) => part.trim())
    .filter(Boolean)
    .map((part) => {
      const m = MEETING_TEXT.exec(part);
      if (!m) return part; // the service answers "meetings[i] must be an object …"
      const pad = (t: string) => t.padStart(5, '0');
      const dates = { ...(m[4] ? { from: m[4] } : {}), ...(m[5] ? { until: m[5] } : {}) };
      return { day: m[1].toUpperCase(), start: pad(m[2]), end: pad(m[3]), ...dates };
    });
}

/**
 * The request body from the form: fields left empty are left out (the service's defaults on
 * create, unchanged on edit), numbers sent as numbers. The service validates; its messages
 * are shown beside their fields (see showFieldError).
 */
export function readForm(form: HTMLFormElement, editing: boolean): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  const title = input(form, 'title').value;
  if (title !== '' || !editing) body.title = title;
  for (const f of NUMBERS) {
    const v = input(form, f).value;
    if (v !== '' || !editing) body[f] = v === '' ? undefined : Number(v);
  }
  const opensAt = toIso(input(form, 'opensAt').value);
  if (opensAt) body.opensAt = opensAt;
  const closesAt = input(form, 'closesAt').value;
  if (closesAt) body.closesAt = toIso(closesAt);
  else if (editing) body.closesAt = null;
  const admission: Record<string, number> = {};
  for (const f of ADMISSION) {
    const v = input(form, f).value;
    if (v !== '') admission[f] = Number(v);
  }
  if (Object.keys(admission).length > 0) body.admission = admission;
  const term = input(form, 'term').value.trim();
  if (term) body.term = term;
  for (const f of TEXTS) {
    const v = input(form, f).value.trim();
    if (v) body[f] = v;
    else if (editing) body[f] = null;
  }
  const meetings = input(form, 'meetings').value;
  if (meetings.trim() || editing) body.meetings = parseMeetings(meetings);
  return body;
}

export function clearFieldErrors(form: HTMLFormElement): void {
  for (const el of form.querySelectorAll<HTMLElement>('.field-error')) {
    el.textContent = '';
    el.hidden = true;
  }
  for (const el of form.querySelectorAll('[aria-invalid]')) el.removeAttribute('aria-invalid');
}

/**
 * Shows a VALIDATION_FAILED message beside the field it names (`capacity must not be less
 * than 1`, `admission.batchSize …`); true when a field was found, else the caller shows it
 * in the page's error banner.
 */
export function showFieldError(form: HTMLFormElement, e: ApiError): boolean {
  if (e.code !== 'VALIDATION_FAILED') return false;
  const field = FIELDS.find((f) => new RegExp(`(^|[^A-Za-z])${f}([^A-Za-z]|$)`).test(e.message));
  if (!field) return false;
  const box = form.querySelector<HTMLElement>(`#error-${field}`);
  if (!box) return false;
  box.textContent = e.message;
  box.hidden = false;
  const el = input(form, field);
  el.setAttribute('aria-invalid', 'true');
  el.focus();
  return true;
}
