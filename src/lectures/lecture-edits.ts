import { createHash, randomBytes } from 'node:crypto';
import { AppError } from '../common/error-codes';
import type { AppConfig } from '../config/app-config';
import type { CreateLectureDto } from './dto/create-lecture.dto';
import type { UpdateLectureDto } from './dto/update-lecture.dto';
import { Lecture } from './lecture.entity';
import { meetingOf, sameMeetings } from './meetings';

/**
 * What a lecture is made of and how an edit changes it, in one place: `POST /lectures` and
 * `PATCH` one at a time (lectures.service.ts), the catalog import thousands at once
 * (src/catalog/), with the same defaults, the same checks and the same errors.
 */

/** A new lecture's row (not saved): the DTO's values over the instance's defaults, a fresh seed. */
export function newLecture(dto: CreateLectureDto, config: AppConfig): Lecture {
  const defaults = config.admission;
  const lecture = Object.assign(new Lecture(), {
    title: dto.title,
    capacity: dto.capacity,
    seatsLeft: dto.capacity,
    opensAt: dto.opensAt ?? new Date(),
    closesAt: dto.closesAt ?? null,
    // Defaults are copied in at creation, so a lecture's admission settings never change
    // behind an admin's back when an instance restarts with other defaults.
    batchSize: dto.admission?.batchSize ?? defaults.batchSize,
    ticketTtlSeconds: dto.admission?.ticketTtlSeconds ?? defaults.ticketTtlSeconds,
    maxActiveTickets: dto.admission?.maxActiveTickets ?? defaults.maxActiveTickets,
    preQueueMinutes: dto.admission?.preQueueMinutes ?? defaults.preQueueMinutes,
    waitlist: dto.admission?.waitlist ?? defaults.waitlist,
    term: dto.term ?? config.defaultTerm,
    ref: dto.ref ?? null,
    component: dto.component ?? 'LEC',
    primaryIds: sortedIds(dto.primaryIds ?? []),
    courseCode: dto.courseCode ?? null,
    credits: dto.credits ?? 3,
    meetings: (dto.meetings ?? []).map(meetingOf),
    instructor: dto.instructor ?? null,
    location: dto.location ?? null,
    ...newSeed(),
  });
  assertWindow(lecture);
  return lecture;
}

/**
 * Applies an edit to a lecture read under its row lock; throws the contract's error when it may
 * not (CAPACITY_BELOW_ENROLLED, HAS_ENROLLMENTS, VALIDATION_FAILED) and then changes nothing.
 */
export function applyEdit(lecture: Lecture, dto: UpdateLectureDto): void {
  const taken = lecture.capacity - lecture.seatsLeft;
  if (dto.capacity !== undefined && dto.capacity < taken) {
    throw fieldError(
      'capacity',
      new AppError(
        'CAPACITY_BELOW_ENROLLED',
        `capacity ${dto.capacity} is below the ${taken} seats already taken`,
      ),
    );
  }
  assertTimetableUnchangedIfHeld(lecture, dto);
  const window = {
    opensAt: dto.opensAt ?? lecture.opensAt,
    closesAt: dto.closesAt !== undefined ? dto.closesAt : lecture.closesAt,
  };
  assertWindow(window);
  if (dto.capacity !== undefined) {
    lecture.seatsLeft = dto.capacity - taken;
    lecture.capacity = dto.capacity;
  }
  if (dto.title !== undefined) lecture.title = dto.title;
  if (dto.term !== undefined) lecture.term = dto.term;
  if (dto.ref !== undefined) lecture.ref = dto.ref;
  if (dto.component !== undefined) lecture.component = dto.component;
  if (dto.primaryIds !== undefined) lecture.primaryIds = sortedIds(dto.primaryIds);
  if (dto.courseCode !== undefined) lecture.courseCode = dto.courseCode;
  if (dto.credits !== undefined) lecture.credits = dto.credits;
  if (dto.meetings !== undefined) lecture.meetings = dto.meetings.map(meetingOf);
  if (dto.instructor !== undefined) lecture.instructor = dto.instructor;
  if (dto.location !== undefined) lecture.location = dto.location;
  Object.assign(lecture, window, definedOnly(dto.admission ?? {}));
}

/** Another lecture of the term has the ref (the unique key says so): the caller's error. */
export function refTakenIn(term: string, ref: string | null | undefined) {
  return (err: unknown): never => {
    const e = err as { code?: string; constraint?: string; driverError?: { constraint?: string } };
    const constraint = e.constraint ?? e.driverError?.constraint;
    if (e.code === '23505' && constraint === 'lecture_term_ref_key') {
      throw new AppError('VALIDATION_FAILED', `ref ${ref} is another lecture's in term ${term}`);
    }
    throw err;
  };
}

function assertWindow(l: Pick<Lecture, 'opensAt' | 'closesAt'>): void {
  if (l.closesAt && l.closesAt.getTime() <= l.opensAt.getTime()) {
    throw fieldError(
      'closesAt',
      new AppError('VALIDATION_FAILED', 'closesAt must be after opensAt'),
    );
  }
}

/**
 * A lecture students hold keeps its place in their timetables: its term, course code, credits,
 * component and meetings are what the rules checked their enrolls against (the schema's foreign
 * keys refuse the first three too). Checked under the row lock every enroll takes.
 */
function assertTimetableUnchangedIfHeld(lecture: Lecture, dto: UpdateLectureDto): void {
  if (lecture.capacity === lecture.seatsLeft) return;
  const changed = [
    dto.term !== undefined && dto.term !== lecture.term && 'term',
    dto.courseCode !== undefined && dto.courseCode !== lecture.courseCode && 'courseCode',
    dto.credits !== undefined && dto.credits !== lecture.credits && 'credits',
    dto.component !== undefined && dto.component !== lecture.component && 'component',
    dto.primaryIds !== undefined &&
      sortedIds(dto.primaryIds).join() !== lecture.primaryIds.join() &&
      'primaryIds',
    dto.meetings !== undefined && !sameMeetings(dto.meetings, lecture.meetings) && 'meetings',
  ].filter(Boolean);
  if (changed.length > 0) {
    const held = lecture.capacity - lecture.seatsLeft;
    throw fieldError(
      changed[0] as string,
      new AppError(
        'HAS_ENROLLMENTS',
        `${changed.join(', ')} cannot change while ${held} student${held === 1 ? '' : 's'} hold${held === 1 ? 's' : ''} a seat`,
      ),
    );
  }
}

/** An edit's error, naming the field at fault (the catalog import lists it per section). */
export type FieldError = AppError & { field: string };

export function fieldError(field: string, error: AppError): FieldError {
  return Object.assign(error, { field });
}

/** Ids ascending, as a lecture keeps its primaries. */
const sortedIds = (ids: number[]): number[] => [...ids].sort((a, b) => a - b);

function definedOnly<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}

/** The draw's secret seed and its published commitment (SHA-256 of the seed's bytes). */
function newSeed(): { drawSeed: Buffer; seedCommitment: string } {
  const drawSeed = randomBytes(32);
  return { drawSeed, seedCommitment: createHash('sha256').update(drawSeed).digest('hex') };
}
