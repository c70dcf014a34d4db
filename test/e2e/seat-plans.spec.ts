import {
  enrollStatementSql,
  executeEnrollSql,
  lockStudentsSql,
} from '../../src/enroll/enroll-statement';
import { autoEnrolledMailSql, seatStatementsSql } from '../../src/enroll/seat-statements';
import { BEGIN_BOUNDED } from '../../src/holds/hold-timing';
import { createLecture } from '../helpers/api';
import { TestContext } from '../helpers/test-context';

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  'Index Cond'?: string;
  Plans?: PlanNode[];
}

/** Every node of a plan, depth first. */
function nodesOf(plan: PlanNode): PlanNode[] {
  return [plan, ...(plan.Plans ?? []).flatMap(nodesOf)];
}

/**
 * The seat transaction's plans on a term's morning: its student_term rows made since the
 * table's statistics were taken (here: taken empty, then 3,000 students of the term, as the
 * first seats of a new term make them). Each batch must find its own students by their key;
 * reading the term's index instead reads every student of the term, under the lecture's lock.
 */
describe('Seat transactions find their students by key, whatever the statistics say', () => {
  let ctx: TestContext;
  let lectureId: number;
  const batch = Array.from({ length: 50 }, (_, i) => `p${i}`);
  const FK_CHECK = 'slots_student_term_check';

  const requests = batch.map((studentId, i) => ({ studentId, deadline: Date.now() + 60_000, queueSeq: i })); // prettier-ignore

  /** The student_term scans of the statement's plan, as the seat transaction runs it. */
  const studentTermScans = (sql: string) => scansOf(sql, 'student_term');

  /** The scans of `table` in the statement's plan, as the seat transaction runs it. */
  async function scansOf(sql: string, table: string): Promise<PlanNode[]> {
    await ctx.sql('BEGIN');
    try {
      for (const s of BEGIN_BOUNDED.slice(1)) await ctx.sql(s);
      const [row] = await ctx.sql<{ 'QUERY PLAN': [{ Plan: PlanNode }] }>(
        `EXPLAIN (FORMAT JSON) ${sql}`,
      );
      return nodesOf(row['QUERY PLAN'][0].Plan).filter((n) => n['Index Name']?.startsWith(table) || n['Relation Name'] === table); // prettier-ignore
    } finally {
      await ctx.sql('ROLLBACK');
    }
  }

  /** A scan of student_term that looks students up: by their id (or the row's), never the term alone. */
  function expectKeyLookups(scans: PlanNode[]): void {
    expect(scans.length).toBeGreaterThan(0);
    // every index read (a bitmap heap scan's is its child's) is keyed by the student or the row
    const indexReads = scans.filter((s) => s['Index Name'] !== undefined);
    expect(indexReads.length).toBeGreaterThan(0);
    for (const read of indexReads) expect(read['Index Cond']).toMatch(/student_id|\(id = /);
    expect(scans.filter((s) => s['Node Type'] === 'Seq Scan')).toEqual([]);
  }

  beforeAll(async () => {
    ctx = await TestContext.create();
    const app = await ctx.startApp({ admission: { intervalMs: 60_000 } });
    ({ id: lectureId } = await createLecture(app.url, {
      title: 'Morning',
      capacity: 100,
      term: 'T1',
    }));
    // The statistics of an empty table, then the term's students (no ANALYZE since: CI's
    // PostgreSQL runs without autovacuum, and a real morning's outruns it).
    await ctx.sql('ALTER TABLE student_term SET (autovacuum_enabled = false)');
    await ctx.sql('ANALYZE student_term');
    // PostgreSQL's own check of the slots' foreign key (ri_triggers.c), planned by a
    // connection at its first seat of the term and kept for its life: made here, before the
    // term has students, inside a seat transaction's settings.
    await ctx.sql(
      `PREPARE ${FK_CHECK} (bigint, varchar, varchar) AS SELECT 1 FROM ONLY student_term x WHERE id = $1 AND student_id = $2 AND term = $3 FOR KEY SHARE OF x`,
    );
    await ctx.sql('SET plan_cache_mode = force_generic_plan');
    await studentTermScans(`EXECUTE ${FK_CHECK} (1, 's1', 'T1')`);
    // So is the seat statement's, prepared by each connection at its first seat transaction
    // (seat.transactions.ts), under the same session setting.
    for (const prepare of seatStatementsSql(18).values()) await ctx.sql(prepare);
    await studentTermScans(executeEnrollSql(lectureId, requests));
    await scansOf(autoEnrolledMailSql(lectureId, batch)[0], 'enrollment');
    await ctx.sql(
      `INSERT INTO student_term (student_id, term) SELECT 's' || g, 'T1' FROM generate_series(1, 3000) g`,
    );
    await ctx.sql(`INSERT INTO student_term (student_id, term) SELECT unnest($1::varchar[]), 'T1'`, [batch]); // prettier-ignore
  });
  afterAll(() => ctx.close());

  it("the foreign key check of a seat's time slots finds the student's row by key", async () => {
    // The plan made at the term's first seat (beforeAll), as the connection keeps it.
    expectKeyLookups(await studentTermScans(`EXECUTE ${FK_CHECK} (1, 's1', 'T1')`));
  });

  it("the batch's student rows are locked by their key", async () => {
    const [, lock] = lockStudentsSql(lectureId, batch);
    expectKeyLookups(await studentTermScans(lock));
  });

  it('the seat statement reads each student of the batch by key (their row, their credit limit)', async () => {
    expectKeyLookups(await studentTermScans(enrollStatementSql(lectureId, requests, 18)));
  });

  it('the prepared seat statement, planned once before the term had students, reads them by key', async () => {
    const execute = executeEnrollSql(lectureId, requests);
    expectKeyLookups(await studentTermScans(execute));
    // and their seats by key too (held already? their credits, their timetable), never the
    // lecture's or the term's enrollments
    const enrollmentReads = (await scansOf(execute, 'enrollment')).filter((s) => s['Index Name']);
    expect(enrollmentReads.length).toBeGreaterThan(0);
    for (const read of enrollmentReads)
      expect(read['Index Cond']).toMatch(/student_id|student_term_id/);
  });

  it("the prepared mail of those enrolled automatically reads the batch's own rows by key", async () => {
    const mail = autoEnrolledMailSql(lectureId, batch)[0];
    const reads = (await scansOf(mail, 'enrollment')).filter((s) => s['Index Name']);
    expect(reads.length).toBeGreaterThan(0);
    for (const read of reads) expect(read['Index Cond']).toMatch(/student_id/);
  });
});
