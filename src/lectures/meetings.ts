import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { ValidationOptions, registerDecorator } from 'class-validator';

export const DAYS = ['MON', 'TUE', 'WED', 'THU', 'FRI', 'SAT', 'SUN'] as const;
export type Day = (typeof DAYS)[number];

/**
 * One weekly meeting of a lecture: `[start, end)` on `day`, 24-hour `HH:MM`; held from `from`
 * until `until` (dates, both included), each unbounded when absent.
 */
export class Meeting {
  @ApiProperty({ enum: DAYS }) day: Day;
  @ApiProperty({ pattern: '^([01][0-9]|2[0-3]):[0-5][0-9]$', example: '09:00' }) start: string;
  @ApiProperty({ pattern: '^([01][0-9]|2[0-3]):[0-5][0-9]$', example: '10:15' }) end: string;
  @ApiPropertyOptional({
    format: 'date',
    example: '2027-01-11',
    description: 'the first day the meeting is held (absent: unbounded)',
  })
  from?: string;
  @ApiPropertyOptional({
    format: 'date',
    example: '2027-03-05',
    description: 'the last day the meeting is held, included (absent: unbounded)',
  })
  until?: string;
}

export const MAX_MEETINGS = 14;
const MEETING_FIELDS = ['day', 'start', 'end', 'from', 'until'];
const HH_MM = /^([01][0-9]|2[0-3]):([0-5][0-9])$/;
const YYYY_MM_DD = /^(\d{4})-(\d{2})-(\d{2})$/;
const MINUTES_PER_DAY = 24 * 60;

/** Minutes since Monday 00:00 of a meeting, as the half-open range `[from, to)`. */
export function slotOf(m: Meeting): [number, number] {
  const day = DAYS.indexOf(m.day) * MINUTES_PER_DAY;
  return [day + minutesOf(m.start), day + minutesOf(m.end)];
}

/**
 * Two meetings overlap when their minutes of the week share one (09:00–10:00 and 10:00–11:00
 * do not) and their dates share a day. PostgreSQL's exclusion constraint says the same
 * (migrations/…-MeetingDates.ts).
 */
export function overlaps(a: Meeting, b: Meeting): boolean {
  const [a0, a1] = slotOf(a);
  const [b0, b1] = slotOf(b);
  return a0 < b1 && b0 < a1 && datesMeet(a, b);
}

/** ISO dates compare as strings; both bounds are included, an absent one is unbounded. */
function datesMeet(a: Meeting, b: Meeting): boolean {
  const first = (m: Meeting) => m.from ?? '0000-01-01';
  const last = (m: Meeting) => m.until ?? '9999-12-31';
  return first(a) <= last(b) && first(b) <= last(a);
}

/** A meeting as stored and answered: with only the date bounds it has (a `null` one dropped). */
export function meetingOf(m: Meeting): Meeting {
  const { day, start, end, from, until } = m;
  return { day, start, end, ...(from ? { from } : {}), ...(until ? { until } : {}) };
}

/** The same set of meetings whatever order an admin listed them in. */
export function sameMeetings(a: Meeting[], b: Meeting[]): boolean {
  const key = (ms: Meeting[]) =>
    ms
      .map((m) => `${slotOf(m).join('-')} ${m.from ?? ''}..${m.until ?? ''}`)
      .sort()
      .join(' ');
  return key(a) === key(b);
}

function minutesOf(hhmm: string): number {
  const [, h, m] = HH_MM.exec(hhmm)!;
  return Number(h) * 60 + Number(m);
}

/** A real calendar day written YYYY-MM-DD (not 2027-02-30). */
function isIsoDate(value: unknown): boolean {
  const m = typeof value === 'string' ? YYYY_MM_DD.exec(value) : null;
  if (!m) return false;
  const d = new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])));
  return d.getUTCFullYear() === Number(m[1]) && d.toISOString().slice(0, 10) === value;
}

/** Why a `meetings` value is refused, naming the item and field; null when it is valid. */
export function meetingsProblem(value: unknown, property = 'meetings'): string | null {
  if (!Array.isArray(value)) return `${property} must be an array of meetings`;
  if (value.length > MAX_MEETINGS) return `${property} must hold at most ${MAX_MEETINGS} meetings`;
  for (const [i, item] of value.entries()) {
    const problem = meetingProblem(item, `${property}[${i}]`);
    if (problem) return problem;
    const clash = (value as Meeting[]).slice(0, i).findIndex((m) => overlaps(m, item as Meeting));
    if (clash >= 0) return `${property}[${i}] overlaps ${property}[${clash}]`;
  }
  return null;
}

function meetingProblem(item: unknown, at: string): string | null {
  if (typeof item !== 'object' || item === null || Array.isArray(item)) {
    return `${at} must be an object { day, start, end, from?, until? }`;
  }
  const unknown = Object.keys(item).find((k) => !MEETING_FIELDS.includes(k));
  if (unknown) return `${at}.${unknown} is not a meeting field (${MEETING_FIELDS.join(', ')})`;
  const { day, start, end, from, until } = item as Record<string, unknown>;
  if (!DAYS.includes(day as Day)) return `${at}.day must be one of ${DAYS.join(', ')}`;
  for (const [name, t] of Object.entries({ start, end })) {
    if (typeof t !== 'string' || !HH_MM.test(t)) {
      return `${at}.${name} must be a 24-hour time HH:MM (00:00–23:59)`;
    }
  }
  if (minutesOf(start as string) >= minutesOf(end as string)) {
    return `${at}.start must be before ${at}.end`;
  }
  for (const [name, d] of Object.entries({ from, until })) {
    if (d !== undefined && d !== null && !isIsoDate(d)) {
      return `${at}.${name} must be a date YYYY-MM-DD, or null`;
    }
  }
  if (typeof from === 'string' && typeof until === 'string' && from > until) {
    return `${at}.from must not be after ${at}.until`;
  }
  return null;
}

/** 0–14 meetings that do not overlap each other; the message names the offending item. */
export function IsMeetings(options?: ValidationOptions) {
  return (target: object, propertyName: string) => {
    ApiProperty({ type: [Meeting], maxItems: MAX_MEETINGS })(target, propertyName);
    registerDecorator({
      name: 'isMeetings',
      target: target.constructor,
      propertyName,
      options: {
        message: (args) => meetingsProblem(args.value, args.property) ?? 'invalid meetings',
        ...options,
      },
      validator: { validate: (value: unknown) => meetingsProblem(value, propertyName) === null },
    });
  };
}
