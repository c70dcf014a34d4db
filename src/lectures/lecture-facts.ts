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
  /** how many may still join and wait once no seat is left (API.md v4, waitlists) */
  waitlist: number;
  /** the lecture's term: a student's term stream follows the lectures of its term */
  term: string;
  /** a secondary section's primaries (empty: a primary section, with a queue) */
  primaryIds: number[];
  /** a primary's secondary sections by component (empty: taken alone) */
  components: Record<string, number[]>;
  /** the packages its secondaries can still seat (null: it has none), capping admission */
  packageSeats: number | null;
}

/** The columns of a lecture row that its facts are made of. */
export type FactsRow = Pick<
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
  | 'waitlist'
  | 'term'
  | 'primaryIds'
> & {
  components: Record<string, number[]> | null;
  packageSeats: number | null;
};

/**
 * The SQL columns of FactsRow for a lecture row (`l.` or none): the sections' two from the
 * functions of migrations/…-SectionPackages.ts, read in the statement's own snapshot.
 */
export function factsColumnsSql(l = ''): string {
  return `${l}id, ${l}version, ${l}capacity, ${l}seats_left AS "seatsLeft", ${l}opens_at AS "opensAt",
  ${l}closes_at AS "closesAt", ${l}batch_size AS "batchSize",
  ${l}ticket_ttl_seconds AS "ticketTtlSeconds", ${l}max_active_tickets AS "maxActiveTickets",
  ${l}pre_queue_minutes AS "preQueueMinutes", ${l}waitlist, ${l}term, ${l}primary_ids AS "primaryIds",
  section_components(${l}id) AS components, package_seats(${l}id) AS "packageSeats"`;
}

/** The seats the lecture can still give: its own, and for a package its sections' too. */
export const seatsToGive = (f: LectureFacts): number =>
  f.packageSeats === null ? f.seatsLeft : Math.min(f.seatsLeft, f.packageSeats);

/** A primary section with secondaries: enrolled in as a package. */
export const isPackage = (f: LectureFacts): boolean => Object.keys(f.components).length > 0;

export function factsOf(l: FactsRow): LectureFacts {
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
    waitlist: l.waitlist,
    term: l.term,
    primaryIds: (l.primaryIds ?? []).map(Number),
    components: l.components ?? {},
    packageSeats: l.packageSeats ?? null,
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
    'primaryIds', f.primaryIds.join(','),
    'components', JSON.stringify(f.components),
    'pkgSeats', f.packageSeats ?? '',
    'waitlist', f.waitlist,
  ]; // prettier-ignore
}

/** undefined when the hash is missing or only a tombstone (`v` alone): rebuild it. */
export function fromHash(id: number, h: Record<string, string>): LectureFacts | undefined {
  // Without `term`, `components` or `waitlist`: written by an older instance; rebuilt like
  // missing facts.
  if (h.v === undefined || h.seatsLeft === undefined || h.term === undefined) return undefined;
  if (h.components === undefined || h.waitlist === undefined) return undefined;
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
    waitlist: Number(h.waitlist),
    term: h.term,
    primaryIds: h.primaryIds ? h.primaryIds.split(',').map(Number) : [],
    components: JSON.parse(h.components) as Record<string, number[]>,
    packageSeats: h.pkgSeats ? Number(h.pkgSeats) : null,
  };
}
