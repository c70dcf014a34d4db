import type { Lecture } from './lecture.entity';

/** What the hot path needs to know about a lecture, as Redis and the in-process cache hold it. */
export interface LectureFacts {
  id: number;
  version: number;
  capacity: number;
  seatsLeft: number;
  opensAt: number; // ms since the epoch
  closesAt: number | null;
  batchSize: number;
  ticketTtlSeconds: number;
  maxActiveTickets: number;
  preQueueMinutes: number;
  /** the lecture's term: a student's term stream follows the lectures of its term */
  term: string;
}

export function factsOf(
  l: Pick<
    Lecture,
    | 'id'
    | 'version'
    | 'capacity'
    | 'seatsLeft'
    | 'opensAt'
    | 'closesAt'
    | 'batchSize'
    | 'ticketTtlSeconds'
    | 'maxActiveTickets'
    | 'preQueueMinutes'
    | 'term'
  >,
): LectureFacts {
  return {
    id: l.id,
    version: l.version,
    capacity: l.capacity,
    seatsLeft: l.seatsLeft,
    opensAt: l.opensAt.getTime(),
    closesAt: l.closesAt ? l.closesAt.getTime() : null,
    batchSize: l.batchSize,
    ticketTtlSeconds: l.ticketTtlSeconds,
    maxActiveTickets: l.maxActiveTickets,
    preQueueMinutes: l.preQueueMinutes,
    term: l.term,
  };
}

/** The facts hash's fields, as the Lua scripts read them. */
export function toHashFields(f: LectureFacts): (string | number)[] {
  return [
    'seatsLeft', f.seatsLeft,
    'capacity', f.capacity,
    'batchSize', f.batchSize,
    'ttl', f.ticketTtlSeconds,
    'maxActive', f.maxActiveTickets,
    'opensAt', f.opensAt,
    'closesAt', f.closesAt ?? '',
    'preQueueMs', f.preQueueMinutes * 60_000,
    'term', f.term,
  ]; // prettier-ignore
}

/** undefined when the hash is missing or only a tombstone (`v` alone): rebuild it. */
export function fromHash(id: number, h: Record<string, string>): LectureFacts | undefined {
  // Without `term`: written by an older instance; rebuilt like missing facts.
  if (h.v === undefined || h.seatsLeft === undefined || h.term === undefined) return undefined;
  return {
    id,
    version: Number(h.v),
    capacity: Number(h.capacity),
    seatsLeft: Number(h.seatsLeft),
    opensAt: Number(h.opensAt),
    closesAt: h.closesAt ? Number(h.closesAt) : null,
    batchSize: Number(h.batchSize),
    ticketTtlSeconds: Number(h.ttl),
    maxActiveTickets: Number(h.maxActive),
    preQueueMinutes: Number(h.preQueueMs ?? 0) / 60_000,
    term: h.term,
  };
}
