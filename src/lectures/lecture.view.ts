import type { Lecture } from './lecture.entity';

export const LECTURE_STATUSES = ['SCHEDULED', 'OPEN', 'FULL', 'CLOSED'] as const;
export type LectureStatus = (typeof LECTURE_STATUSES)[number];

/** A lecture's admission settings. */
export class AdmissionSettingsView {
  batchSize: number;
  ticketTtlSeconds: number;
  maxActiveTickets: number;
}

/** The `Lecture` JSON of API.md. */
export class LectureView {
  /** positive integer */
  id: number;
  title: string;
  capacity: number;
  seatsLeft: number;
  /** ISO 8601 */
  opensAt: string;
  /** ISO 8601, or null: never closes */
  closesAt: string | null;
  /** SCHEDULED before opensAt, OPEN, FULL (no seat left) or CLOSED after closesAt */
  status: LectureStatus;
  admission: AdmissionSettingsView;
}

export class LectureList {
  items: LectureView[];
  total: number;
}

/** A closed window wins over a full lecture; a full lecture is only FULL while open. */
export function lectureStatus(
  l: Pick<Lecture, 'opensAt' | 'closesAt' | 'seatsLeft'>,
  now: Date,
): LectureStatus {
  if (l.closesAt && l.closesAt.getTime() <= now.getTime()) return 'CLOSED';
  if (l.opensAt.getTime() > now.getTime()) return 'SCHEDULED';
  return l.seatsLeft > 0 ? 'OPEN' : 'FULL';
}

export function toLectureView(l: Lecture, now = new Date()): LectureView {
  return {
    id: l.id,
    title: l.title,
    capacity: l.capacity,
    seatsLeft: l.seatsLeft,
    opensAt: l.opensAt.toISOString(),
    closesAt: l.closesAt ? l.closesAt.toISOString() : null,
    status: lectureStatus(l, now),
    admission: {
      batchSize: l.batchSize,
      ticketTtlSeconds: l.ticketTtlSeconds,
      maxActiveTickets: l.maxActiveTickets,
    },
  };
}
