#!/usr/bin/env node
// Audits a lecture's fair opening from PostgreSQL alone, without trusting the service's code:
//   npm run audit -- --lecture 42
// Reads DATABASE_URL (or ./.env, or the service's default). Checks that the revealed seed
// matches the commitment published from the start, recomputes every drawn student's HMAC and
// the drawn order, and checks the admission log: queue numbers only ever increase, the drawn
// students come first in draw order, and every enrollment's ticket number matches the log.
// Prints a verdict; exits 0 when everything holds, 1 on any mismatch, 2 when it cannot audit.
const { createHash, createHmac } = require('node:crypto');
const { existsSync } = require('node:fs');
const { parseArgs } = require('node:util');
const { Client } = require('pg');

function usage(message) {
  console.error(`audit: ${message}`);
  console.error('usage: npm run audit -- --lecture <id>   (DATABASE_URL names the database)');
  process.exit(2);
}

let values;
try {
  ({ values } = parseArgs({ options: { lecture: { type: 'string' } } }));
} catch (err) {
  usage(err.message);
}
if (!values.lecture || !/^[1-9][0-9]{0,9}$/.test(values.lecture)) {
  usage('--lecture must be a lecture id');
}
const lectureId = Number(values.lecture);
if (!process.env.DATABASE_URL && existsSync('.env')) process.loadEnvFile('.env');
const databaseUrl = process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/enroll';

const hmacOf = (seed, studentId) =>
  createHmac('sha256', seed).update(studentId, 'utf8').digest('hex');

/** Every check, as a list of problems found (empty: it holds). */
function audit(lecture, drawn, log, enrollments) {
  const problems = [];
  const notes = [];
  const seed = lecture.draw_seed;
  if (!lecture.drawn_at) {
    notes.push('not drawn yet: the seed is still secret, nothing to recompute');
  } else {
    const commitment = createHash('sha256').update(seed).digest('hex');
    if (commitment !== lecture.seed_commitment) {
      problems.push(
        `the seed's SHA-256 ${commitment} is not the commitment ${lecture.seed_commitment}`,
      );
    }
    if (drawn.length !== Number(lecture.pre_queued_count)) {
      problems.push(
        `${drawn.length} drawn students stored, the lecture says ${lecture.pre_queued_count}`,
      );
    }
    drawn.forEach((d, i) => {
      if (Number(d.position) !== i + 1)
        problems.push(`draw position ${d.position} out of sequence`);
      const hmac = hmacOf(seed, d.student_id);
      if (hmac !== d.hmac)
        problems.push(
          `draw position ${d.position}: ${d.student_id}'s HMAC is ${hmac}, stored ${d.hmac}`,
        );
      if (i > 0) {
        const prev = drawn[i - 1];
        const before = hmacOf(seed, prev.student_id);
        if (before > hmac || (before === hmac && prev.student_id >= d.student_id)) {
          problems.push(`draw positions ${prev.position} and ${d.position} are not in HMAC order`);
        }
      }
    });
    notes.push(`draw: ${drawn.length} students recomputed from the revealed seed`);
  }

  const first = Number(lecture.draw_first_seq ?? 1);
  const drawnAt = (seq) => drawn[seq - first];
  let previous = 0;
  const seqOf = new Map();
  for (const a of log) {
    const seq = Number(a.queue_seq);
    if (seq <= previous)
      problems.push(`admission ${a.id} (${a.student_id}): queue number ${seq} after ${previous}`);
    previous = Math.max(previous, seq);
    const fromDraw = lecture.drawn_at && seq >= first && seq < first + drawn.length;
    if ((a.via === 'draw') !== Boolean(fromDraw)) {
      problems.push(
        `admission ${a.id} (${a.student_id}): via ${a.via}, but queue number ${seq} ${fromDraw ? 'is' : 'is not'} a drawn place`,
      );
    }
    if (a.via === 'draw' && fromDraw && drawnAt(seq).student_id !== a.student_id) {
      problems.push(
        `admission ${a.id}: drawn place ${seq} belongs to ${drawnAt(seq).student_id}, not ${a.student_id}`,
      );
    }
    if (!seqOf.has(a.student_id)) seqOf.set(a.student_id, new Set());
    seqOf.get(a.student_id).add(seq);
  }
  notes.push(`admission log: ${log.length} entries in order`);

  let unlogged = 0;
  for (const e of enrollments) {
    if (e.queue_seq === null) continue;
    const seq = Number(e.queue_seq);
    const logged = seqOf.get(e.student_id);
    if (!logged) unlogged += 1;
    else if (!logged.has(seq))
      problems.push(
        `${e.student_id} enrolled with queue number ${seq}, which the log never gave them`,
      );
  }
  notes.push(
    `enrollments: ${enrollments.length}, ${unlogged} with a ticket the log lost before it was copied`,
  );
  return { problems, notes };
}

(async () => {
  const db = new Client({ connectionString: databaseUrl });
  try {
    await db.connect();
  } catch (err) {
    console.error(`audit: cannot reach ${databaseUrl.replace(/\/\/[^@]*@/, '//')}: ${err.message}`);
    process.exit(2);
  }
  try {
    const [lecture] = (await db.query('SELECT * FROM lecture WHERE id = $1', [lectureId])).rows;
    if (!lecture) usage(`no lecture ${lectureId} in this database`);
    const drawn = (
      await db.query('SELECT * FROM lecture_draw WHERE lecture_id = $1 ORDER BY position', [
        lectureId,
      ])
    ).rows;
    const log = (
      await db.query(
        `SELECT stream_ms || '-' || stream_seq AS id, student_id, queue_seq, via FROM admission
        WHERE lecture_id = $1 ORDER BY stream_ms, stream_seq`,
        [lectureId],
      )
    ).rows;
    const enrollments = (
      await db.query('SELECT student_id, queue_seq FROM enrollment WHERE lecture_id = $1', [
        lectureId,
      ])
    ).rows;
    const { problems, notes } = audit(lecture, drawn, log, enrollments);
    console.log(`lecture ${lectureId} "${lecture.title}"`);
    for (const n of notes) console.log(`  ${n}`);
    for (const p of problems) console.log(`  MISMATCH: ${p}`);
    console.log(
      problems.length === 0 ? 'verdict: OK' : `verdict: FAILED (${problems.length} mismatches)`,
    );
    process.exitCode = problems.length === 0 ? 0 : 1;
  } finally {
    await db.end();
  }
})();
