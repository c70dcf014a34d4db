// The hot lecture: many admitted students enroll at once, the group commit's own rate.
const { latency, sleep, now } = require('../lib/load');
const stores = require('../lib/stores');
const { createLecture, setTermLimit } = require('../lib/lectures');
const { windowedTerm } = require('../lib/registration');
const { STUDENTS, DB_URL, token } = require('../lib/run-config');

let runs = 0; // each run's students and term are its own: the database outlives a run
const WEEKDAYS = ['MON', 'TUE', 'WED', 'THU', 'FRI'];

/**
 * Enroll rate on one hot lecture: many admitted students enroll at once. With `holding`, the
 * lecture is in a term where every student already holds 4 or 5 lectures (with course codes,
 * credits and meetings), so each enroll's rules read a real timetable; without it, the
 * students hold nothing and the rules find nothing to read. With `packages`, the lecture is
 * taken with one of its two discussions (half the students choose each): every enroll takes
 * two seats, in a transaction that locks both rows. With `emptySections`, the lecture alone, each
 * enroll sending `{ "sections": [] }`: what carrying a body costs any enroll (its parsing and
 * validation), the reference that tells a package's own cost from its body's. With `windows`,
 * the lecture alone in a term with four registration windows (one open now matching every
 * student's record, by years), every student's record imported, and holds on as many other
 * students as a tenth of these: what judging holds, windows and records costs a join and an
 * enroll. With `records`, the same records and holds in a term without windows: the reference
 * that tells the window rule's cost from what records imported before change (every student's
 * term row is there before the enroll, which otherwise makes it).
 */
async function hotLecture(
  api,
  admin,
  {
    holding = false,
    packages = false,
    emptySections = false,
    windows = false,
    records = false,
  } = {},
) {
  const k = Math.min(STUDENTS, 2000);
  const run = ++runs;
  const prefix = `hot${holding ? 'r' : packages ? 'p' : emptySections ? 'b' : windows ? 'w' : records ? 'c' : ''}${run}-`;
  const timetable = holding ? await heldTimetables(api, admin, k, prefix, `bench-rules-${run}`) : {}; // prettier-ignore
  const course = packages ? { term: `bench-packages-${run}`, courseCode: 'PKG' } : {};
  const registration = windows || records ? { term: `bench-windows-${run}` } : {};
  const { id } = await createLecture(api, admin, {
    capacity: k,
    admission: { batchSize: k, maxActiveTickets: k, ticketTtlSeconds: 600 },
    ...timetable,
    ...course,
    ...registration,
  });
  const sections = [];
  for (let i = 0; packages && i < 2; i++) {
    const dis = { ...course, component: 'DIS', capacity: k / 2, primaryIds: [id] };
    sections.push((await createLecture(api, admin, dis)).id);
  }
  const body = (i) =>
    packages || emptySections
      ? { body: { sections: packages ? [sections[i % 2]] : [] } }
      : undefined;
  const ids = Array.from({ length: k }, (_, i) => `${prefix}${i}`);
  const held = Array.from({ length: Math.ceil(k / 10) }, (_, i) => `${prefix}held${i}`);
  if (windows || records) await windowedTerm(api, admin, registration.term, ids, held, { windows }); // prettier-ignore
  const students = ids.map((id) => token(id));
  await Promise.all(students.map((t) => api.request('POST', `/lectures/${id}/queue`, t)));
  for (let i = 0; i < 100; i++) {
    const st = await api.request('GET', `/lectures/${id}/stats`, admin);
    if (st.body?.activeTickets === k) break;
    await sleep(100);
  }
  const t0 = now();
  const replies = await Promise.all(
    students.map((t, i) => api.request('POST', `/lectures/${id}/enroll`, t, body(i))),
  );
  const seconds = (now() - t0) / 1000;
  const ok = replies.filter((r) => r.status === 201);
  return {
    students: k,
    holding,
    packages,
    emptySections,
    windows,
    records,
    enrolled: ok.length,
    rate: ok.length / seconds,
    ...latency(ok),
    invariants: await packageInvariants([id, ...sections]),
  };
}

/** The seat invariants of a lecture and its sections together, and every package whole. */
async function packageInvariants(ids) {
  const each = await Promise.all(ids.map((l) => stores.seatInvariants(DB_URL, l)));
  const sum = (key) => each.reduce((n, i) => n + i[key], 0);
  const seated = each.slice(1).reduce((n, i) => n + i.rows, 0);
  // With sections, every primary seat has exactly one section seat beside it.
  const halfPackages = ids.length > 1 ? Math.abs(each[0].rows - seated) : 0;
  return { ...each[0], oversold: sum('oversold') + halfPackages, doubleSeats: sum('doubleSeats') };
}

/**
 * Five lectures of the rules' term, one each weekday 08:00–09:00 with its own course code, and
 * every student holding the first 4 or 5 of them, written straight into PostgreSQL (setting up
 * 9,000 seats through the queue would measure the queue, not the rules). Answers the hot
 * lecture's timetable fields: the same term, meetings clear of the held ones, within the limit.
 */
async function heldTimetables(api, admin, k, prefix, term) {
  await setTermLimit(api, admin, term, 30);
  const ids = [];
  for (const [i, day] of WEEKDAYS.entries()) {
    const l = await createLecture(api, admin, {
      capacity: k,
      term,
      courseCode: `HELD${i}`,
      credits: 3,
      meetings: [{ day, start: '08:00', end: '09:00' }],
    });
    ids.push(l.id);
  }
  await stores.withPg(DB_URL, async (c) => {
    await c.query(
      `INSERT INTO enrollment (lecture_id, student_id, term, course_code, credits)
       SELECT l.id, $2 || s, l.term, l.course_code, l.credits
         FROM generate_series(0, $3 - 1) s, unnest($1::int[]) WITH ORDINALITY AS h(id, n)
         JOIN lecture l ON l.id = h.id
        WHERE h.n <= 4 + s % 2`,
      [ids, prefix, k],
    );
    await c.query(
      `INSERT INTO student_term (student_id, term) SELECT $1 || s, $2 FROM generate_series(0, $3 - 1) s`,
      [prefix, term, k],
    );
    await c.query(
      `INSERT INTO enrollment_slot (lecture_id, student_id, term, student_term_id, slot, dates)
       SELECT e.lecture_id, e.student_id, e.term, st.id, m.slot, m.dates
         FROM enrollment e JOIN lecture l ON l.id = e.lecture_id
         JOIN student_term st ON st.student_id = e.student_id AND st.term = e.term,
              unnest(l.meeting_ranges, l.meeting_dates) m (slot, dates)
        WHERE e.lecture_id = ANY ($1)`,
      [ids],
    );
    await c.query(
      `UPDATE lecture l SET seats_left = capacity - (SELECT count(*) FROM enrollment e WHERE e.lecture_id = l.id),
              version = version + 1
        WHERE id = ANY ($1)`,
      [ids],
    );
  });
  return {
    term,
    courseCode: 'HOT',
    credits: 3,
    meetings: [
      { day: 'MON', start: '10:00', end: '11:30' },
      { day: 'WED', start: '10:00', end: '11:30' },
    ],
  };
}

module.exports = { hotLecture };
