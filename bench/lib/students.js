// How one student behaves at the opening: joins, waits (by polling, or on a live stream),
// enrolls the moment it is admitted. `run` holds the stampede's shared state and figures.
const { openStream } = require('./sse');
const { now, sleep } = require('./load');

/**
 * ADMITTED: enroll now (one student in ten double-clicks). Returns the outcome, or null when
 * the student should look again (503, or NO_TICKET racing its own double-click).
 */
async function enrollNow(s, status, run) {
  s.admittedKey = Date.parse(status.ticketExpiresAt) || s.admittedKey;
  s.noticedAt ??= Date.now();
  s.enrollSentAt ??= now() - run.t0;
  const clicks = s.id.endsWith('7') ? 2 : 1;
  if (clicks === 2) run.doubleClicks += 1;
  const replies = await Promise.all(
    Array.from({ length: clicks }, () =>
      run.api.request('POST', `/lectures/${run.id}/enroll`, s.token, { lane: 'enroll' }),
    ),
  );
  const won = replies.find((x) => x.status === 201);
  if (won) {
    run.enrollMs.push(won.ms);
    run.freedAt.push(Date.now());
    s.enrolledAt = now() - run.t0;
    if (won.body.seatsLeft === 0 && run.fillMs === null) run.fillMs = now() - run.t0;
    return 'enrolled';
  }
  if (replies.some((x) => x.body?.code === 'FULL')) return 'wasted: admitted, then FULL';
  // A term rule said no (each stampede's lecture has a term of its own, so none should).
  const rule = replies.find((x) => ['CREDIT_LIMIT', 'TIME_CONFLICT', 'SAME_COURSE'].includes(x.body?.code)); // prettier-ignore
  if (rule) return `refused: ${rule.body.code}`;
  if (replies.some((x) => x.status === 200)) return 'enrolled';
  return null;
}

/** Joins; true when the student has something to wait for (else its outcome is set). */
async function join(s, run) {
  s.joinStart = now();
  const r = await run.api.request('POST', `/lectures/${run.id}/queue`, s.token);
  s.joinEnd = now();
  s.waitingSince = Date.now(); // wall clock, as the server's grant instants are
  s.joined = r;
  if (r.status >= 400 && r.body?.code === 'FULL') s.outcome = 'gave up: full';
  return !s.outcome;
}

/** Polls GET …/queue: quickly near the front, else by estimatedWaitSeconds / 4. */
async function pollingStudent(s, run) {
  if (!(await join(s, run))) return;
  let r = s.joined;
  while (now() < run.deadline) {
    const b = r.body || {};
    if (r.status >= 400 && b.code === 'FULL') return (s.outcome = 'gave up: full');
    if (r.status >= 400 || b.status === undefined) {
      await sleep(200);
    } else if (b.status === 'WAITING') {
      if (b.seatsLeft === 0) return (s.outcome = 'gave up: full');
      const est = (b.estimatedWaitSeconds ?? 1) * 1000;
      const nearFront = b.position <= 2 * run.lecture.admission.maxActiveTickets;
      await sleep(nearFront ? 50 : Math.min(2000, Math.max(100, est / 4)));
    } else if (b.status === 'NOT_QUEUED') {
      return (s.outcome = 'not queued');
    } else if (b.status === 'ENROLLED') {
      return (s.outcome = s.outcome || 'enrolled');
    } else {
      const outcome = await enrollNow(s, b, run);
      if (outcome) return (s.outcome = outcome);
      await sleep(100);
    }
    r = await run.api.request('GET', `/lectures/${run.id}/queue`, s.token);
  }
  s.outcome = 'timed out';
}

/** Waits on the live stream (its own connection); enrolls the moment ADMITTED arrives. */
async function streamingStudent(s, run) {
  if (!(await join(s, run))) return;
  if (await enrollIfAdmitted(s, run)) return;
  await waitOnStreams(s, run);
}

/** The join answered ADMITTED: enroll now. True when that settled the student's outcome. */
async function enrollIfAdmitted(s, run) {
  const joined = s.joined.body || {};
  if (joined.status !== 'ADMITTED') return false;
  s.noticedAt = Date.now();
  const outcome = await enrollNow(s, joined, run);
  if (outcome) s.outcome = outcome;
  return Boolean(outcome);
}

/**
 * The student sits on the lecture's page before registration opens: its stream is open (it
 * shows NOT_QUEUED) before the opening. Resolves once the first status has arrived.
 */
async function openPage(s, run) {
  let first;
  const seen = new Promise((r) => (first = r));
  s.page = await openStream(run.url, `/lectures/${run.id}/queue/events`, s.token, (event, data) => {
    first();
    if (event !== 'status' || s.joinEnd === undefined) return; // before its join: NOT_QUEUED
    if (data.status === 'ADMITTED' && data.ticketExpiresAt && !s.pageAdmitted) {
      s.noticedAt ??= Date.now();
      s.pageAdmitted = data;
      s.wake?.();
    }
    if (data.status === 'WAITING' && data.seatsLeft === 0) {
      s.pageFull = true;
      s.wake?.();
    }
  });
  if (s.page.status === 200) {
    s.streamOpenAt = Date.now();
    await Promise.race([seen, sleep(5000)]);
  }
}

/**
 * At the opening, a student whose page holds a live stream joins and enrolls the moment the
 * stream (or the join's answer) says ADMITTED; if the stream fails, it opens another.
 */
async function pageStudent(s, run) {
  const woken = new Promise((r) => (s.wake = r));
  if (!(await join(s, run))) return s.page.close();
  if (await enrollIfAdmitted(s, run)) return s.page.close();
  await Promise.race([woken, s.page.ended, untilDeadline(run)]);
  s.page.close();
  if (s.pageAdmitted) {
    const outcome = await enrollNow(s, s.pageAdmitted, run);
    if (outcome) return (s.outcome = outcome);
  }
  if (s.pageFull) return (s.outcome = 'gave up: full');
  await waitOnStreams(s, run); // the page's stream ended without an answer: open another
}

/** Opens the student's stream (again after a failure) and enrolls when it says ADMITTED. */
async function waitOnStreams(s, run) {
  while (now() < run.deadline && !s.outcome) {
    let admitted;
    let stream;
    stream = await openStream(
      run.url,
      `/lectures/${run.id}/queue/events`,
      s.token,
      (event, data) => {
        if (event !== 'status') return;
        if (data.status === 'ADMITTED' && data.ticketExpiresAt && !admitted) {
          admitted = data;
          s.noticedAt = Date.now();
        }
        if (data.status === 'ENROLLED') s.outcome ??= 'enrolled';
        if (data.status === 'WAITING' && data.seatsLeft === 0) s.outcome ??= 'gave up: full';
        if (data.status === 'NOT_QUEUED') s.outcome ??= 'not queued';
        if (admitted) stream?.close();
      },
    );
    // The first frames can arrive before openStream's promise resolves: close it now if so.
    if (admitted) stream.close();
    if (stream.status !== 200) {
      await sleep(200); // refused (MAX_STREAMS, a restart): try again shortly
      continue;
    }
    s.streamOpenAt ??= Date.now(); // wall clock, as the server's grant instants are
    await Promise.race([stream.ended, untilDeadline(run)]);
    stream.close();
    if (admitted && !s.outcome) {
      const outcome = await enrollNow(s, admitted, run);
      if (outcome) s.outcome = outcome;
    }
  }
  s.outcome ??= 'timed out';
}

/** Resolves at the stampede's deadline; never keeps the process alive after the run. */
const untilDeadline = (run) =>
  new Promise((r) => setTimeout(r, Math.max(0, run.deadline - now())).unref());

module.exports = { pollingStudent, streamingStudent, openPage, pageStudent };
