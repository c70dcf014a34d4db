import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { escapeLiteral, Pool, PoolClient, QueryResult } from 'pg';
import { heardClient } from '../database/heard-client';
import { DataSource } from 'typeorm';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { BEGIN_BOUNDED, BEGIN_STATEMENTS } from '../holds/hold-timing';
import { OutcomeUnknown } from '../holds/outcome-unknown';
import { LectureFacts, factsOf } from '../lectures/lecture-facts';
import {
  EnrollOutcome,
  EnrollRequest,
  LECTURE_COLUMNS,
  enrollStatementSql,
  executeEnrollSql,
  lockStudentsSql,
  otherSeatsSql,
  outcomeOf,
} from './enroll-statement';
import {
  SeatStatementsLost,
  autoEnrolledMailSql,
  lostPreparedStatement,
  prepareSeatStatements,
} from './seat-statements';
import {
  factsOfSql,
  freeSectionsSql,
  heldSectionsSql,
  heldWithinSql,
  lockLecturesSql,
  otherPrimariesSql,
  touchSql,
} from './package-statements';

export type { EnrollOutcome, EnrollRequest } from './enroll-statement';

/** A seat given back: the lecture as the transaction left it, and its seat_release row's id. */
export interface FreedSeat {
  lecture: LectureFacts;
  releaseId: string;
}

/**
 * RETRY: the secondary sections the student holds changed between their read and the locks
 * (their own request elsewhere); nothing changed, read them again and retry.
 */
export type CancelOutcome =
  | ({ kind: 'CANCELLED'; written: LectureFacts[] } & FreedSeat)
  | { kind: 'NOT_ENROLLED' }
  | { kind: 'RETRY' };

/** A swap's result: the seats taken and the lecture given up, or why nothing changed. */
export type SwapOutcome =
  | {
      kind: 'SWAPPED';
      taken: { enrolledAt: Date; lecture: LectureFacts };
      /** the secondary sections taken with it, as left */
      sections: LectureFacts[];
      freed: FreedSeat;
      /** the sections given up and the other primaries of all of them, as left */
      written: LectureFacts[];
    }
  | { kind: 'NOT_ENROLLED' | 'OTHER_TERM' | 'RETRY' }
  | { kind: 'KEPT'; outcome: EnrollOutcome };

/** An exchange's result: the primary and the sections held after it, or why nothing changed. */
export type ExchangeOutcome =
  | { kind: 'EXCHANGED'; lecture: LectureFacts; sections: number[]; written: LectureFacts[] }
  | { kind: 'NOT_ENROLLED' | 'RETRY' }
  | { kind: 'KEPT'; outcome: EnrollOutcome };

/** An exchange takes no ticket: its deadline only bounds the statement's own run. */
const EXCHANGE_DEADLINE_MS = 60_000;

const NOT_FOUND: EnrollOutcome = { kind: 'NOT_FOUND' };

/**
 * The seat transactions, each sent as ONE round trip (a multi-statement simple query), so the
 * lecture's row lock is held only while PostgreSQL itself works, never across the network, and
 * everything the answer needs comes back from the transaction itself: after COMMIT nothing
 * else is asked, so a committed seat is never answered with an error. The row lock is FOR NO
 * KEY UPDATE: it excludes every other writer of the lecture row, but not the key-share locks
 * of inserts that reference the lecture (the admission log's copy, a draw's record), which
 * FOR UPDATE made wait behind every enroll batch at the busiest moment.
 * Simple queries take no parameters: the lecture id is an integer and the student id matches
 * `[A-Za-z0-9_.:@-]{1,64}` (checked by the JWT guard); both are still escaped as literals.
 */
@Injectable()
export class SeatTransactions {
  private readonly pool: Pool;
  /** connections that have the seat statements prepared (a connection's own, for its life) */
  private readonly prepared = new WeakSet<PoolClient>();

  constructor(
    @InjectDataSource() db: DataSource,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {
    this.pool = (db.driver as unknown as { master: Pool }).master;
  }

  /**
   * Enrolls a batch of students (each at most once) in one transaction: locks the lecture row,
   * then the students' term rows, keeps those without a row whom the term's rules let in and
   * whose hold has not passed its deadline, gives seats to them in batch order while seats last
   * and the window is open, decrements by that many and inserts their rows. One commit, one
   * round trip for the whole batch; a student a rule refuses does not fail the rest. Returns
   * each request's outcome, in the order given. Throws OutcomeUnknown when the connection failed
   * after the transaction (COMMIT included) was sent.
   */
  async enrollBatch(
    lectureId: number,
    requests: EnrollRequest[],
    sections: number[] = [],
  ): Promise<EnrollOutcome[]> {
    return (await this.enrollChoices(lectureId, [{ sections, requests }]))[0];
  }

  /**
   * enrollBatch for every choice of secondary sections its students made (a lecture taken
   * alone is the choice of none), in ONE transaction: every lecture row of every choice locked
   * first in id order, then every student's, then one seat statement per choice, each seeing
   * the seats the ones before it took. A lecture's enrolls are one commit whatever their
   * students chose (the choices took turns, a commit each, halving a package's batches). Each
   * choice's outcomes, in its requests' order.
   */
  async enrollChoices(
    lectureId: number,
    choices: { sections: number[]; requests: EnrollRequest[] }[],
  ): Promise<EnrollOutcome[][]> {
    const id = Number(lectureId);
    const groups = choices.map(({ sections, requests }) => ({
      sections,
      once: [...new Map(requests.map((r) => [r.studentId, r])).values()],
    }));
    const allSections = [...new Set(groups.flatMap((g) => g.sections))];
    const students = [...new Set(groups.flatMap((g) => g.once.map((r) => r.studentId)))];
    const auto = [...new Set(groups.flatMap((g) => g.once.filter((r) => r.auto).map((r) => r.studentId)))]; // prettier-ignore
    const results = await this.transaction(
      lockLecturesSql([id, ...allSections], allSections),
      ...lockStudentsSql(id, students),
      // After the locks: each statement's snapshot sees every seat and row committed before,
      // and what the choices before it took. A package's lectures as it left them (their
      // seats, the primary's package seats) and the other primaries of its sections follow it.
      ...groups.flatMap(({ sections, once }) => [
        this.enrollSql(id, once, sections),
        ...(sections.length > 0 ? [factsOfSql([id, ...sections]), otherPrimariesSql([id], sections)] : []), // prettier-ignore
      ]),
      // Last, so the statements above keep their places: the mails of those enrolled by the
      // service itself, in the transaction that enrolls them (API.md v4, notifications).
      ...autoEnrolledMailSql(id, auto),
    );
    let at = BEGIN_STATEMENTS + 3;
    return choices.map(({ sections, requests }) => {
      const pkg = sections.length > 0;
      const after = packageAfter(results[at + 1], sections);
      const others = pkg ? results[at + 2].rows.map(factsOf) : [];
      const outcomes = new Map(
        results[at].rows.map((r) => [r.student_id as string, withPackage(outcomeOf(r), id, after, others)]), // prettier-ignore
      );
      at += pkg ? 3 : 1;
      return requests.map((r) => outcomes.get(r.studentId) ?? { kind: 'NOT_FOUND' });
    });
  }

  /** The seats left in the other sections of a full section's component (see otherSeatsSql). */
  async otherSeats(primaryId: number, fullId: number): Promise<number> {
    const { rows } = await this.pool.query(otherSeatsSql(primaryId, fullId));
    return Number(rows[0].seats);
  }

  /**
   * Gives up the seat in `fromId` (with the secondary sections held with it, `fromSections`, read
   * beforehand) and takes one in `lectureId` (with `sections`), in one transaction, all or none:
   * every lecture row locked in id order, then the student's term row; the seats given up
   * first, so the rules see the timetable without them; committed only if the new seats were
   * taken, else rolled back. Two round trips (the decision needs the first one's answer); the
   * primary's seat given up is written to seat_release with it (the sweep records it in Redis
   * if this instance cannot: src/holds/seat-releases.ts).
   */
  async swap(
    lectureId: number,
    fromId: number,
    request: EnrollRequest,
    { sections = [], fromSections = [] }: { sections?: number[]; fromSections?: number[] } = {},
  ): Promise<SwapOutcome> {
    const [id, from] = [Number(lectureId), Number(fromId)];
    const sid = escapeLiteral(request.studentId);
    const guard = heldWithinSql(from, sid, fromSections);
    const touching = [...sections, ...fromSections];
    return this.decided<SwapOutcome>(
      [
        lockLecturesSql([id, from, ...touching], touching),
        ...lockStudentsSql(id, [request.studentId]),
        `SELECT ${guard} AS ok`,
        freeSectionsSql(from, sid, { guard }),
        // `from` a primary (a secondary is given up with its primary only), of the same term
        freeSeatSql(from, sid, `AND primary_id IS NULL AND term = (SELECT term FROM lecture WHERE id = ${id}) AND ${guard}`), // prettier-ignore
        this.enrollSql(id, [request], sections),
        factsOfSql([id, ...sections]),
        otherPrimariesSql([id, from], touching),
        // Last: the mail of a swap the service made itself, rolled back with a swap undone.
        ...autoEnrolledMailSql(id, request.auto ? [request.studentId] : []),
      ],
      ([locked, , , held, freedSections, freedRows, enrolled, after, others]) => {
        if (!held.rows[0].ok) return { commit: false, value: { kind: 'RETRY' } };
        const terms = new Set(locked.rows.filter((r) => [id, from].includes(r.id)).map((r) => r.term)); // prettier-ignore
        const freed = freedRows.rows[0];
        const row = enrolled.rows[0];
        const outcome = row ? withPackage(outcomeOf(row), id, packageAfter(after, sections)) : NOT_FOUND; // prettier-ignore
        if (freed && outcome.kind === 'ENROLLED') {
          const taken = { enrolledAt: outcome.enrolledAt, lecture: outcome.lecture };
          const value: SwapOutcome = {
            kind: 'SWAPPED',
            taken,
            sections: outcome.sections ?? [],
            freed: freedOf(freed),
            written: [...freedSections.rows.map(factsOf), ...others.rows.map(factsOf)],
          };
          return { commit: true, value };
        }
        if (outcome.kind === 'NOT_FOUND' || outcome.kind === 'ALREADY_ENROLLED') {
          return { commit: false, value: { kind: 'KEPT', outcome } };
        }
        if (terms.size > 1) return { commit: false, value: { kind: 'OTHER_TERM' } };
        if (!freed) return { commit: false, value: { kind: 'NOT_ENROLLED' } };
        return { commit: false, value: { kind: 'KEPT', outcome } };
      },
    );
  }

  /**
   * Exchanges the student's secondary sections of the named sections' components for them
   * (PUT /me/enrollments/:id/sections): the old seats given back and the new ones taken under
   * the same rules as an enroll, in one transaction, committed only if every new seat was
   * taken. `held`: the sections held now, read beforehand, so that every row is locked in id
   * order first.
   */
  async exchange(
    primaryId: number,
    studentId: string,
    sections: number[],
    held: number[],
  ): Promise<ExchangeOutcome> {
    const id = Number(primaryId);
    const sid = escapeLiteral(studentId);
    const taking = sections.filter((s) => !held.includes(s));
    const request = { studentId, deadline: Date.now() + EXCHANGE_DEADLINE_MS, queueSeq: null };
    const guard = heldWithinSql(id, sid, held);
    const touching = [...held, ...sections];
    return this.decided<ExchangeOutcome>(
      [
        lockLecturesSql([id, ...touching], touching),
        ...lockStudentsSql(id, [studentId]),
        `SELECT ${guard} AS ok`,
        freeSectionsSql(id, sid, { only: sections, guard }),
        enrollStatementSql(id, [request], this.config.maxCredits, { sections: taking, exchange: true, guard }), // prettier-ignore
        touchSql(id),
        factsOfSql([id, ...taking]),
        otherPrimariesSql([id], touching),
        heldSectionsSql(id, sid),
      ],
      ([, , , ok, freedSections, enrolled, , after, others, now]) => {
        if (!ok.rows[0].ok) return { commit: false, value: { kind: 'RETRY' } };
        const row = enrolled.rows[0];
        if (!row?.held_at) return { commit: false, value: { kind: 'NOT_ENROLLED' } };
        const outcome = withPackage(outcomeOf(row), id, packageAfter(after, taking));
        if (outcome.kind !== 'ENROLLED') return { commit: false, value: { kind: 'KEPT', outcome } };
        const value: ExchangeOutcome = {
          kind: 'EXCHANGED',
          lecture: outcome.lecture,
          sections: now.rows[0].sections.map(Number),
          written: [
            ...(outcome.sections ?? []),
            ...freedSections.rows.map(factsOf),
            ...others.rows.map(factsOf),
          ],
        };
        return { commit: true, value };
      },
    );
  }

  /**
   * Locks the lecture rows (the primary and `sections`, the secondaries held with it, read
   * beforehand), deletes the student's rows — the secondaries' first — and gives the seats
   * back, writing the primary's release to seat_release in the same transaction.
   */
  async cancel(
    lectureId: number,
    studentId: string,
    sections: number[] = [],
  ): Promise<CancelOutcome> {
    const id = Number(lectureId);
    const sid = escapeLiteral(studentId);
    const guard = heldWithinSql(id, sid, sections);
    const results = await this.transaction(
      lockLecturesSql([id, ...sections], sections),
      `SELECT ${guard} AS ok`,
      freeSectionsSql(id, sid, { guard }),
      freeSeatSql(id, sid, `AND ${guard}`),
      otherPrimariesSql([id], sections),
    );
    const [ok, freedSections, freedRows, others] = results.slice(BEGIN_STATEMENTS + 1);
    if (!ok.rows[0].ok) return { kind: 'RETRY' };
    const row = freedRows.rows[0];
    if (!row) return { kind: 'NOT_ENROLLED' };
    const written = [...freedSections.rows.map(factsOf), ...others.rows.map(factsOf)];
    return { kind: 'CANCELLED', ...freedOf(row), written };
  }

  /** The secondary sections the student holds with a primary (no lock: re-read under them). */
  async heldSections(primaryId: number, studentId: string): Promise<number[]> {
    const { rows } = await this.pool.query(heldSectionsSql(primaryId, escapeLiteral(studentId)));
    return rows[0].sections.map(Number);
  }

  async enrollmentsOf(
    studentId: string,
  ): Promise<{ lectureId: number; title: string; enrolledAt: Date }[]> {
    const { rows } = await this.pool.query(
      `SELECT e.lecture_id AS "lectureId", l.title, e.enrolled_at AS "enrolledAt"
         FROM enrollment e JOIN lecture l ON l.id = e.lecture_id
        WHERE e.student_id = $1 ORDER BY e.enrolled_at, e.lecture_id`,
      [studentId],
    );
    return rows;
  }

  async enrolledAt(lectureId: number, studentId: string): Promise<Date | null> {
    const { rows } = await this.pool.query(
      'SELECT enrolled_at FROM enrollment WHERE lecture_id = $1 AND student_id = $2',
      [lectureId, studentId],
    );
    return rows[0]?.enrolled_at ?? null;
  }

  /**
   * BEGIN; time-outs; the statements — one round trip — then COMMIT or ROLLBACK as `decide`
   * says from their results (one per statement, BEGIN's left out). A connection lost while
   * committing leaves the outcome unknown (OutcomeUnknown).
   */
  private async decided<T>(
    statements: string[],
    decide: (results: QueryResult[]) => { commit: boolean; value: T },
  ): Promise<T> {
    const sql = [...BEGIN_BOUNDED, ...statements].join(';\n');
    const { client, results } = await this.firstRoundTrip(sql, false);
    let committing = false;
    try {
      const { commit, value } = decide(results.slice(BEGIN_STATEMENTS));
      committing = commit;
      await client.query(commit ? 'COMMIT' : 'ROLLBACK');
      client.release();
      return value;
    } catch (err) {
      await client.query('ROLLBACK').then(
        () => client.release(),
        (rollbackErr: Error) => client.release(rollbackErr),
      );
      throw committing ? OutcomeUnknown.unless(err) : err;
    }
  }

  /** The seat statement for these requests: a lecture taken alone by the prepared one. */
  private enrollSql(id: number, requests: EnrollRequest[], sections: number[]): string {
    if (sections.length === 0) return executeEnrollSql(id, requests);
    return enrollStatementSql(id, requests, this.config.maxCredits, { sections });
  }

  /**
   * A pooled connection that has the seat statements prepared (seat-statements.ts); `afresh`:
   * prepared again whatever it has.
   */
  private async connect(afresh = false): Promise<PoolClient> {
    const client = await heardClient(this.pool);
    if (this.prepared.has(client) && !afresh) return client;
    try {
      await prepareSeatStatements(client, this.config.maxCredits, afresh);
    } catch (err) {
      client.release(err as Error); // its state unknown: not given to anyone else
      throw err;
    }
    this.prepared.add(client);
    return client;
  }

  /**
   * BEGIN; time-outs; the statements; COMMIT — one round trip. Results: one per statement. An
   * error PostgreSQL answered means nothing committed; a connection lost before any answer
   * leaves the COMMIT's fate unknown (OutcomeUnknown).
   */
  private async transaction(...statements: string[]): Promise<QueryResult[]> {
    // Connected only once every statement is built: one that threw while the connection was
    // out (it used to be the first argument) would have kept it checked out for good.
    const sql = [...BEGIN_BOUNDED, ...statements, 'COMMIT'].join(';\n');
    const { client, results } = await this.firstRoundTrip(sql, true);
    client.release();
    return results;
  }

  /**
   * Sends a transaction's first round trip on a connection with the seat statements prepared,
   * answering the connection (still checked out) and the results. On an error the transaction
   * is rolled back (or the connection dropped) and the error thrown — as OutcomeUnknown where
   * the round trip `commits` and may have landed; one a lost prepared statement caused is tried
   * once more on another connection (seat-statements.ts).
   */
  private async firstRoundTrip(
    sql: string,
    commits: boolean,
  ): Promise<{ client: PoolClient; results: QueryResult[] }> {
    for (let tries = 1; ; tries++) {
      const client = await this.connect(tries > 1);
      try {
        return { client, results: (await client.query(sql)) as unknown as QueryResult[] };
      } catch (err) {
        if (lostPreparedStatement(err)) {
          this.prepared.delete(client);
          client.release(err as Error); // dropped: its transaction ends with it, nothing done
          if (tries < 2) continue;
          throw new SeatStatementsLost(err as Error);
        }
        // The failed statement left the transaction aborted: roll back, or drop the connection.
        await client.query('ROLLBACK').then(
          () => client.release(),
          (rollbackErr: Error) => client.release(rollbackErr),
        );
        throw commits ? OutcomeUnknown.unless(err) : err;
      }
    }
  }
}

/**
 * Deletes the student's row in the lecture and gives its seat back, recording the release;
 * returns the lecture as left and the release's id (no row: nothing). `and`: a further
 * condition on the row.
 */
function freeSeatSql(lectureId: number, sid: string, and = ''): string {
  return `WITH gone AS (
       DELETE FROM enrollment WHERE lecture_id = ${lectureId} AND student_id = ${sid} ${and}
       RETURNING 1),
     freed AS (
       UPDATE lecture SET seats_left = seats_left + 1, version = version + 1
        WHERE id = ${lectureId} AND EXISTS (SELECT 1 FROM gone)
       RETURNING ${LECTURE_COLUMNS}),
     released AS (
       INSERT INTO seat_release (lecture_id, student_id, version)
       SELECT id, ${sid}, version FROM freed RETURNING id)
     SELECT freed.*, released.id AS release_id FROM freed, released`;
}

function freedOf(row: Record<string, unknown>): FreedSeat {
  return {
    lecture: factsOf(row as Parameters<typeof factsOf>[0]),
    releaseId: String(row.release_id),
  };
}

/** A package's lectures as the transaction left them (none for a lecture taken alone). */
function packageAfter(result: QueryResult | undefined, sections: number[]): LectureFacts[] {
  return sections.length > 0 && result ? result.rows.map(factsOf) : [];
}

/**
 * A package's outcome with the lectures as the transaction left them: the primary's facts (its
 * package seats now counted after this batch) and the sections' to record.
 */
function withPackage(
  outcome: EnrollOutcome,
  id: number,
  after: LectureFacts[],
  others: LectureFacts[] = [],
): EnrollOutcome {
  if (after.length === 0 || !('lecture' in outcome)) return outcome;
  const lecture = after.find((f) => f.id === id) ?? outcome.lecture;
  return { ...outcome, lecture, sections: after.filter((f) => f.id !== id), others };
}
