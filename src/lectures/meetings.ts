import { ApiProperty } from '@nestjs/swagger';
import { ValidationOptions, registerDecorator } from 'class-validator';

export const DAYS = ['MON', 'TUE', 'WED', 'THU', 'FRI', 'SAT', 'SUN'] as const;
export type Day = (typeof DAYS)[number];

/** One weekly meeting of a lecture: `[start, end)` on `day`, 24-hour `HH:MM`. */
export class Meeting {
  @ApiProperty({ enum: DAYS }) day: Day;
  @ApiProperty({ pattern: '^([01][0-9]|2[0-3]):[0-5][0-9]$', example: '09:00' }) start: string;
  @ApiProperty({ pattern: '^([01][0-9]|2[0-3]):[0-5][0-9]$', example: '10:15' }) end: string;
}

export const MAX_MEETINGS = 14;
const HH_MM = /^([01][0-9]|2[0-3]):([0-5][0-9])$/;
const MINUTES_PER_DAY = 24 * 60;

/** Minutes since Monday 00:00 of a meeting, as the half-open range `[from, to)`. */
export function slotOf(m: Meeting): [number, number] {
  const day = DAYS.indexOf(m.day) * MINUTES_PER_DAY;
  return [day + minutesOf(m.start), day + minutesOf(m.end)];
}

/** Ranges meet only when they share a minute: 09:00–10:00 and 10:00–11:00 do not. */
export function overlaps(a: Meeting, b: Meeting): boolean {
  const [a0, a1] = slotOf(a);
  const [b0, b1] = slotOf(b);
  return a0 < b1 && b0 < a1;
}

/** The meetings as PostgreSQL's `int4multirange` literal (what the exclusion constraint sees). */
export function slotsLiteral(meetings: Meeting[]): string {
  return `{${meetings.map((m) => `[${slotOf(m).join(',')})`).join(',')}}`;
}

/** The same set of meetings whatever order an admin listed them in. */
export function sameMeetings(a: Meeting[], b: Meeting[]): boolean {
  const key = (ms: Meeting[]) =>
    ms
      .map((m) => slotOf(m).join('-'))
      .sort()
      .join(' ');
  return key(a) === key(b);
}

function minutesOf(hhmm: string): number {
  const [, h, m] = HH_MM.exec(hhmm)!;
  return Number(h) * 60 + Number(m);
}

/** Why a `meetings` value is refused, naming the item and field; null when it is valid. */
export function meetingsProblem(value: unknown, property = 'meetings'): string | null {
  if (!Array.isArray(value)) return `${property} must be an array of meetings`;
  if (value.length > MAX_MEETINGS) return `${property} must hold at most ${MAX_MEETINGS} meetings`;
  for (const [i, item] of value.entries()) {
    const at = `${property}[${i}]`;
    if (typeof item !== 'object' || item === null || Array.isArray(item)) {
      return `${at} must be an object { day, start, end }`;
    }
    const unknown = Object.keys(item).find((k) => !['day', 'start', 'end'].includes(k));
    if (unknown) return `${at}.${unknown} is not a meeting field (day, start, end)`;
    const { day, start, end } = item as Record<string, unknown>;
    if (!DAYS.includes(day as Day)) return `${at}.day must be one of ${DAYS.join(', ')}`;
    for (const [name, t] of [
      ['start', start],
      ['end', end],
    ] as const) {
      if (typeof t !== 'string' || !HH_MM.test(t)) {
        return `${at}.${name} must be a 24-hour time HH:MM (00:00–23:59)`;
      }
    }
    if (minutesOf(start as string) >= minutesOf(end as string)) {
      return `${at}.start must be before ${at}.end`;
    }
    const clash = (value as Meeting[]).slice(0, i).findIndex((m) => overlaps(m, item as Meeting));
    if (clash >= 0) return `${at} overlaps ${property}[${clash}]`;
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
