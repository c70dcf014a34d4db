import { ApiProperty } from '@nestjs/swagger';
import type { Lecture } from './lecture.entity';
import { Meeting } from './meetings';

export const LECTURE_STATUSES = ['SCHEDULED', 'OPEN', 'FULL', 'CLOSED'] as const;
export type LectureStatus = (typeof LECTURE_STATUSES)[number];

/** A lecture's admission settings. */
export class AdmissionSettingsView {
  batchSize: number;
  ticketTtlSeconds: number;
  maxActiveTickets: number;
  /** minutes before opensAt from which joins enter the pre-queue; 0: no pre-queue */
  preQueueMinutes: number;
  /**
   * while no seat is left, a join still waits as long as fewer than this many students wait
   * (everyone waiting counts); 0: a join is refused FULL
   */
  waitlist: number;
}

/** The fair opening's commitment, and after the draw everything needed to check it. */
export class FairnessView {
  /** lowercase hex SHA-256 of the seed's 32 bytes, published from the start */
  seedCommitment: string;
  /** lowercase hex of the 32-byte seed; null until the draw */
  seed: string | null;
  /** how many pre-queued students were drawn; null until the draw */
  preQueued: number | null;
  /** ISO 8601 time of the draw; null until the draw */
  drawnAt: string | null;
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
  @ApiProperty({ enum: LECTURE_STATUSES }) // in this order, whatever order the compiler lists
  status: LectureStatus;
  admission: AdmissionSettingsView;
  fairness: FairnessView;
  /** the term it is taught in */
  term: string;
  /** the registrar's own id of the section, unique within the term; null: none */
  ref: string | null;
  /** LEC, LAB, DIS, …: the kind of teaching this section is */
  component: string;
  /** a secondary section's primaries, ascending; empty: a primary section */
  primaryIds: number[];
  /** the secondary sections naming this one as primary, ascending (read-only) */
  secondaryIds: number[];
  /** sections of one course share it within a term; null: not a section */
  courseCode: string | null;
  credits: number;
  /** weekly meetings, [start, end) */
  meetings: Meeting[];
  instructor: string | null;
  location: string | null;
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

export function toLectureView(
  l: Lecture,
  now = new Date(),
  secondaryIds: number[] = [],
): LectureView {
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
      preQueueMinutes: l.preQueueMinutes,
      waitlist: l.waitlist,
    },
    fairness: fairnessOf(l),
    term: l.term,
    ref: l.ref,
    component: l.component,
    primaryIds: l.primaryIds,
    secondaryIds,
    courseCode: l.courseCode,
    credits: l.credits,
    meetings: l.meetings,
    instructor: l.instructor,
    location: l.location,
  };
}

/** The seed stays secret until the draw has run, then everything is public. */
export function fairnessOf(
  l: Pick<Lecture, 'drawSeed' | 'seedCommitment' | 'drawnAt' | 'preQueuedCount'>,
): FairnessView {
  const drawn = l.drawnAt !== null;
  return {
    seedCommitment: l.seedCommitment,
    seed: drawn ? l.drawSeed.toString('hex') : null,
    preQueued: drawn ? (l.preQueuedCount ?? 0) : null,
    drawnAt: drawn ? l.drawnAt!.toISOString() : null,
  };
}
