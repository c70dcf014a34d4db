import { Injectable } from '@nestjs/common';
import type { RedisClient } from '../redis/redis-client';
import {
  WAITING_LECTURES_KEY,
  WINDOW_DRAWS_KEY,
  lectureKeys,
  studentLinesKey,
} from '../redis/keys';
import { InjectRedis } from '../redis/redis.token';
import { ScriptError, isScriptError } from '../redis/script-commands';
import type { QueueOrderFloor } from '../lectures/lecture.snapshots';
import { AutoSettings, LastRefusal, parseAutoValue } from '../auto-enroll/auto-enroll.types';
import { watchConnectionEpochs } from './connection-epochs';
import {
  AdmitResult,
  HoldRef,
  Place,
  PlaceState,
  QueueShape,
  WindowOpening,
  shapeOf,
} from './line.types';

/**
 * A lecture's waiting line and its tickets in Redis, one typed method per script (lua/): they
 * are one unit, because the scripts that move the line write both (admission pops students and
 * grants tickets, a leave gives up a place or a ticket) — and with them the pre-queue and the
 * draw, the queue numbers, the admission counters and the admission log's appends. Every write
 * of those keys is in this file (src/redis/keys.ts names the owner of each; a test holds it).
 * The ticket's life: granted by admission, consumed by an enroll (held "in flight" until its
 * transaction is recorded), then released, given back, or — the enroll's instance died —
 * granted again.
 */
/** A join's opening when it is a registration window's (src/registration): none. */
const NO_WINDOW: WindowOpening = { window: null };
/** admit-19's room for auto-enrolling students when the caller sets none: every one fits. */
export const NO_AUTO_LIMIT = -1;

/** A registration morning and its day: long enough for every line a student is in. */
const STUDENT_LINES_TTL_MS = 48 * 3600_000;

@Injectable()
export class LineStore {
  /** Bumped whenever the Redis behind the line may have lost its last writes (see below). */
  private epoch = 1;
  /** Per lecture, the epoch in which its queue order's floor was last restored. */
  private readonly floorHeld = new Map<number, number>();
  /** Per lecture, the epoch in which a join or read last saw its draw marker. */
  private readonly drawSeen = new Map<number, number>();

  constructor(@InjectRedis() private readonly redis: RedisClient) {
    watchConnectionEpochs(redis, () => (this.epoch += 1));
  }

  /**
   * Whether the lecture's queue numbers are known to continue above what PostgreSQL recorded
   * since Redis last (re)connected or moved a slot to another master. A failover's promoted
   * replica, or a restart from a persistence file, can lack the last INCRs of the counter while
   * keeping the facts, so nothing would rebuild them: until the floor is restored again, no
   * script that hands out numbers (join, admit, draw) may run for the lecture (API.md v3:
   * queueSeq is never reused).
   */
  orderHeld(lectureId: number): boolean {
    return this.floorHeld.get(lectureId) === this.epoch;
  }

  /** The current epoch, read before the floor is read from PostgreSQL. */
  get connectionEpoch(): number {
    return this.epoch;
  }

  /**
   * The student's place; with `join`, joins at the back (or the pre-queue) first. `member` is
   * the student's pre-queue member ('' once the lecture has opened); `askRoom`: a new join
   * says whether admitting now would admit (event admission). `auto`: what a join's body says
   * of auto-enroll (API.md v4) — the settings, null not to, undefined no body — applied in the
   * step that makes or keeps the place (join-18). null: facts not in Redis. The answer carries
   * no admission rate (`observedRate` fills it in).
   */
  async place(
    lectureId: number,
    studentId: string,
    join: boolean,
    member: string,
    askRoom = false,
    opening: WindowOpening = NO_WINDOW,
    auto?: AutoSettings | null,
  ): Promise<Omit<Place, 'observedRate'> | null> {
    const k = lectureKeys(lectureId);
    const w = opening.window;
    const body = auto === undefined ? '' : auto === null ? '-' : JSON.stringify(auto);
    const reply = await this.redis.join(
      k.queue, k.seq, k.ticket(studentId), k.inflight, k.enrolled, k.facts, k.tickets,
      k.prequeue, k.drawn, k.draw, k.wpre, k.wqueue, k.wopen, k.wdraws, k.wdrawn, k.wruns,
      k.waitlisted, k.auto, studentId, join ? '1' : '0', member, askRoom ? '1' : '0',
      w?.name ?? '', w?.opensAt ?? 0, w?.member ?? '', body,
    ); // prettier-ignore
    if (isScriptError(reply)) {
      // The lecture's data went (the facts with it): what was seen of its draw is forgotten.
      this.drawSeen.delete(lectureId);
      return null; // ScriptError.Missing
    }
    const [state, detail, waiting, seatsLeft, created, room, seq, drew, opened, autoEnroll, refusal] = reply; // prettier-ignore
    if (opened === 1) this.drawSeen.set(lectureId, this.epoch);
    return {
      auto: { autoEnroll: autoEnroll === 1, lastRefusal: parseAutoValue<LastRefusal>(refusal) },
      state: state as PlaceState,
      position: state === 'WAITING' ? detail : null,
      ticketExpiresAt: state === 'ADMITTED' && detail > 0 ? detail : null,
      waiting,
      seatsLeft,
      created: created === 1,
      roomToAdmit: room === 1,
      seq: state === 'WAITING' ? seq : null,
      drew: (drew & 1) === 1,
      windowDrew: (drew & 2) === 2,
    };
  }

  /**
   * Whether a call of this epoch saw the lecture's draw marker: it has opened and its pre-queue
   * is drawn, so no pre-queue member is needed for it. The marker is never removed; only Redis
   * losing its data could, and that starts a new epoch (or, lost while connected, shows as the
   * facts missing: forgotten then too).
   */
  drawnSeen(lectureId: number): boolean {
    return this.drawSeen.get(lectureId) === this.epoch;
  }

  /** Students admitted per second over the last minute; null when too few were seen. */
  async observedRate(lectureId: number): Promise<number | null> {
    const rate = await this.redis.observedRate(lectureKeys(lectureId).admitLog);
    return rate === '' ? null : Number(rate);
  }

  /**
   * Many students' places at once, as `place` reads them without joining (the pre-queue's draw
   * aside: it is not run here). `members`: each student's pre-queue member ('' once opened).
   * null: facts not in Redis.
   */
  async places(
    lectureId: number,
    studentIds: string[],
    members: string[],
  ): Promise<Omit<Place, 'created' | 'roomToAdmit' | 'drew'>[] | null> {
    const k = lectureKeys(lectureId);
    const reply = await this.redis.places(
      k.queue, k.inflight, k.enrolled, k.facts, k.admitLog, k.prequeue, k.draw, k.ticketPrefix,
      k.wpre, studentIds.length, ...studentIds, ...members,
    ); // prettier-ignore
    if (isScriptError(reply)) return null;
    const [waiting, seatsLeft, rate, opened, ...each] = reply as [number, number, string, number, ...(string | number)[]]; // prettier-ignore
    // Seen drawn, as by a join: the watches of a lecture need not look for its draw again.
    if (opened === 1) this.drawSeen.set(lectureId, this.epoch);
    return studentIds.map((_, i) => {
      const [state, detail, seq] = each.slice(i * 3, i * 3 + 3) as [PlaceState, number, number];
      return {
        state,
        position: state === 'WAITING' ? detail : null,
        ticketExpiresAt: state === 'ADMITTED' && detail > 0 ? detail : null,
        waiting,
        seatsLeft,
        observedRate: rate === '' ? null : Number(rate),
        seq: state === 'WAITING' ? seq : null,
      };
    });
  }

  /**
   * What every live stream of a lecture needs for positions, in one call: the head's join
   * sequence number (null: the queue is empty), the queue length, the observed admission rate,
   * and the sequence numbers that left from behind the head.
   */
  async positions(lectureId: number): Promise<QueueShape> {
    const k = lectureKeys(lectureId);
    return shapeOf(await this.redis.positions(k.queue, k.gone, k.admitLog));
  }

  /**
   * Gives up the place (in the pre-queue too, given its member) and any unused ticket, and its
   * auto-enroll settings with it (the last refusal stays for the student to read).
   */
  async leave(
    lectureId: number,
    studentId: string,
    member: string,
  ): Promise<{ left: boolean; gaveBack: boolean }> {
    const k = lectureKeys(lectureId);
    const [left, gaveBack] = await this.redis.leave(
      k.queue, k.ticket(studentId), k.tickets, k.stats, k.gone, k.prequeue, k.wpre, k.wqueue,
      k.waitlisted, k.auto, studentId, member,
    ); // prettier-ignore
    return { left: left === 1, gaveBack: gaveBack === 1 };
  }

  /** Lists lectures for the cron (idempotent: every join repeats it, the cron's sweep too). */
  async watch(...lectureIds: number[]): Promise<void> {
    if (lectureIds.length > 0) await this.redis.sadd(WAITING_LECTURES_KEY, ...lectureIds);
  }

  /**
   * Notes that the student joined this lecture of the term: a term stream opened later follows
   * it. Only first joins note (a repeat changes nothing), and the set is bounded by the term's
   * lectures; a term stream takes out those the student turned out not to be in (forgetJoined),
   * and it lapses STUDENT_LINES_TTL_MS after the student's last join in the term.
   */
  async noteJoined(studentId: string, term: string, lectureIds: number[]): Promise<void> {
    if (lectureIds.length === 0) return;
    const key = studentLinesKey(studentId, term);
    // Two plain commands, not a pipeline of their own: they ride in the connection's shared
    // auto-pipeline with everyone else's commands of the moment (one socket write, not one more).
    await Promise.all([
      this.redis.sadd(key, ...lectureIds),
      this.redis.pexpire(key, STUDENT_LINES_TTL_MS),
    ]);
  }

  /** The lectures of the term the student joined lately (a superset of those they are in). */
  async joinedIn(studentId: string, term: string): Promise<number[]> {
    return (await this.redis.smembers(studentLinesKey(studentId, term))).map(Number);
  }

  /** Takes lectures the student is found not to be in out of the set (PlansService.forgetLines). */
  async forgetJoined(studentId: string, term: string, lectureIds: number[]): Promise<void> {
    if (lectureIds.length > 0)
      await this.redis.srem(studentLinesKey(studentId, term), ...lectureIds);
  }

  async watched(): Promise<number[]> {
    return (await this.redis.smembers(WAITING_LECTURES_KEY)).map(Number);
  }

  /**
   * Takes an idle lecture off the cron's list. Removing first and checking after means a join
   * racing with this is never lost: either its own watch() comes after the removal, or its
   * student is already in the queue (or the pre-queue) when we look.
   */
  async unwatchIfIdle(lectureId: number): Promise<void> {
    const k = lectureKeys(lectureId);
    await this.redis.srem(WAITING_LECTURES_KEY, lectureId);
    // The pre-queue too: its lecture must stay listed to be drawn at opensAt.
    const [q, t, h, p, w] = await Promise.all([
      this.redis.zcard(k.queue),
      this.redis.zcard(k.tickets),
      this.redis.zcard(k.inflight),
      this.redis.zcard(k.prequeue),
      this.redis.zcard(k.wqueue),
    ]);
    if (q + t + h + p + w > 0) await this.watch(lectureId);
  }

  /**
   * Figures for the admin's stats route. `seatsLeft`: the lecture's, as the caller shows them;
   * `waitlisted` is everyone waiting while none is left (API.md v4, waitlists), else 0.
   */
  async counts(
    lectureId: number,
    seatsLeft: number,
  ): Promise<{
    waiting: number;
    activeTickets: number;
    admittedTotal: number;
    preQueued: number;
    waitlisted: number;
  }> {
    const k = lectureKeys(lectureId);
    const now = Date.now();
    const [waiting, active, admitted, preQueued, windows] = (await this.redis
      .multi()
      .zcard(k.queue)
      .zcount(k.tickets, `(${now}`, '+inf')
      .hget(k.stats, 'admittedTotal')
      .zcard(k.prequeue)
      .zcard(k.wqueue)
      .exec())!.map(([err, v]) => {
      if (err) throw err;
      return Number(v ?? 0);
    });
    // the lecture's own pre-queue and every registration window's
    return {
      waiting,
      activeTickets: active,
      admittedTotal: admitted,
      preQueued: preQueued + windows,
      waitlisted: seatsLeft > 0 ? 0 : waiting,
    };
  }

  /**
   * Queue length and unconsumed tickets of every lecture the cron watches, for /metrics: one
   * command per key, not one pipeline (on a cluster the lectures live on different shards).
   */
  async gauges(): Promise<{ id: string; waiting: number; active: number }[]> {
    const ids = await this.redis.smembers(WAITING_LECTURES_KEY);
    const now = Date.now();
    return Promise.all(
      ids.map(async (id) => {
        const k = lectureKeys(Number(id));
        const [waiting, active] = await Promise.all([
          this.redis.zcard(k.queue),
          this.redis.zcount(k.tickets, `(${now}`, '+inf'),
        ]);
        return { id, waiting, active };
      }),
    );
  }

  // --- the draw, as it ran in Redis (includes/draw.lua), for its record in PostgreSQL

  /** The draw's marker, and the drawn pre-queue members in order; null: not drawn here. */
  async drawn(
    lectureId: number,
  ): Promise<{ at: string; count: number; first: string; members: string[] } | null> {
    const k = lectureKeys(lectureId);
    const marker = await this.redis.hgetall(k.draw);
    if (marker.at === undefined) return null; // not drawn (or Redis lost it: drawn again)
    const count = Number(marker.count);
    const members = count > 0 ? await this.redis.zrange(k.drawn, 0, -1) : [];
    return { at: marker.at, count, first: marker.first, members };
  }

  /**
   * After Redis lost the lecture's data: queue numbers continue above what PostgreSQL recorded,
   * and a recorded draw is not run again (restore-order-2).
   */
  async restoreOrder(lectureId: number, floor: QueueOrderFloor, epoch: number): Promise<void> {
    const k = lectureKeys(lectureId);
    const d = floor.draw;
    await this.redis.restoreOrder(
      k.seq, k.draw, floor.seq, d?.at ?? '', d?.count ?? '', d?.first ?? '',
    ); // prettier-ignore
    // Held only for the epoch the floor was read in: a change meanwhile asks again.
    if ((this.floorHeld.get(lectureId) ?? 0) < epoch) this.floorHeld.set(lectureId, epoch);
  }

  // --- the registration windows' draws (includes/window-draw.lua), for their record

  /** The lecture has students in a window's pre-queue: the draw sweep looks at it. */
  async windowPreQueued(lectureId: number): Promise<void> {
    await this.redis.sadd(WINDOW_DRAWS_KEY, lectureId);
  }

  /** Lectures with students in a window's pre-queue (a superset: the sweep takes out the rest). */
  async windowDrawsPending(): Promise<number[]> {
    return (await this.redis.smembers(WINDOW_DRAWS_KEY)).map(Number);
  }

  /**
   * The draw sweep of a lecture (draw-windows-12): its own draw if due, then every window's draw
   * of it whose opening has come by Redis's clock. A lecture with nothing left pending (nor
   * drawn and unrecorded) leaves the sweep's set — looked at again after, since a pre-queue join
   * may have listed it between the script and the removal. null: the facts are not in Redis.
   */
  async drawWindows(lectureId: number): Promise<{ lectureDrew: boolean; drawn: string[] } | null> {
    const k = lectureKeys(lectureId);
    const reply = await this.redis.drawWindows(
      k.queue, k.seq, k.facts, k.prequeue, k.drawn, k.draw, k.wpre, k.wqueue, k.wopen, k.wdraws,
      k.wdrawn, k.wruns,
    ); // prettier-ignore
    if (reply.length === 1) return null; // ScriptError.Missing
    const [lectureDrew, pending, ...drawn] = reply;
    if (Number(pending) === 0) {
      await this.redis.srem(WINDOW_DRAWS_KEY, lectureId);
      const [left, unrecorded] = await Promise.all([this.redis.zcard(k.wqueue), this.redis.zcard(k.wdrawn)]); // prettier-ignore
      if (left + unrecorded > 0) await this.windowPreQueued(lectureId);
    }
    return { lectureDrew: Number(lectureDrew) === 1, drawn: drawn.map(String) };
  }

  /** The term's windows were edited: the lecture's pending pre-queues wait for their openings as now. */
  async moveWindows(
    lectureId: number,
    openings: { name: string; opensAt: number }[],
  ): Promise<void> {
    if (openings.length === 0) return;
    await this.redis.moveWindows(lectureKeys(lectureId).wopen, ...openings.flatMap((w) => [w.name, w.opensAt])); // prettier-ignore
  }

  /**
   * A window's draw of the lecture as it ran ('<window>@<opening>'), and its drawn members in
   * order; null: not drawn, or recorded already.
   */
  async windowDrawn(
    lectureId: number,
    marker: string,
  ): Promise<{ at: number; count: number; first: number; members: string[] } | null> {
    const k = lectureKeys(lectureId);
    const value = await this.redis.hget(k.wdraws, marker);
    if (!value) return null;
    const [at, count, first] = value.split(' ').map(Number);
    const members = await this.redis.zrangebylex(k.wdrawn, `[${marker}|`, `(${marker}}`);
    return { at, count, first, members };
  }

  /** The window draws of the lecture not recorded yet, as their markers. */
  async windowsDrawn(lectureId: number): Promise<string[]> {
    return this.redis.hkeys(lectureKeys(lectureId).wdraws);
  }

  /** A window's draw is recorded in PostgreSQL: Redis's copy of it goes. */
  async dropWindowDrawn(lectureId: number, marker: string): Promise<void> {
    const k = lectureKeys(lectureId);
    await this.redis.zremrangebylex(k.wdrawn, `[${marker}|`, `(${marker}}`);
    await this.redis.hdel(k.wdraws, marker);
  }

  /** The drawn list is recorded in PostgreSQL: Redis's copy goes. */
  async dropDrawn(lectureId: number): Promise<void> {
    await this.redis.del(lectureKeys(lectureId).drawn);
  }

  /** Whether Redis holds anything of the lecture's pre-queue or draw. */
  async hasPreQueueOrDraw(lectureId: number): Promise<boolean> {
    const k = lectureKeys(lectureId);
    return (await this.redis.exists(k.prequeue, k.draw)) > 0;
  }

  // --- admission and the tickets' life

  /** Pop-and-grant. null: the lecture's facts are not in Redis (rebuild them first). */
  async admit(
    lectureId: number,
    mode: 'tick' | 'event' | 'draw',
    intervalMs: number,
    autoRoom = NO_AUTO_LIMIT,
    /** auto-enrolling students are granted only once cleared: these are (null: no clearing) */
    cleared: string[] | null = null,
  ): Promise<AdmitResult | null> {
    const k = lectureKeys(lectureId);
    const reply = await this.redis.admit(
      k.queue, k.tickets, k.inflight, k.facts, k.stats, k.ticketPrefix, k.enrolled, k.admitLog,
      k.prequeue, k.drawn, k.draw, k.seq, k.grants, k.admissions, k.wpre, k.wqueue, k.wopen,
      k.wruns, k.auto, mode, intervalMs, autoRoom, cleared ? '1' : '0', ...(cleared ?? []),
    ); // prettier-ignore
    if (isScriptError(reply)) return null; // ScriptError.Missing
    const [admitted, waiting, expired, lapsed, idle, students, expiresAt, drew, autos, paced, needs] = reply; // prettier-ignore
    return {
      admitted, waiting, expired, lapsed, idle: idle === 1, students, expiresAt, drew: drew === 1,
      autos, paced: paced === 1, needs,
    }; // prettier-ignore
  }

  /**
   * The draw alone, if due (admit-19 in 'draw' mode: also the closed window's clean-up, never a
   * grant). null: the lecture's facts are not in Redis (rebuild them first).
   */
  draw(lectureId: number): Promise<AdmitResult | null> {
    return this.admit(lectureId, 'draw', 1); // the interval only matters to 'tick'
  }

  /**
   * Deletes the ticket (only one caller can win) and holds the seat until `holdMs` from now.
   * Returns the ticket's remaining lifetime, its queue sequence number (null: not known) and
   * the hold's deadline (ms, by Redis's clock).
   */
  async consume(
    lectureId: number,
    studentId: string,
    holdMs: number,
  ): Promise<{ msLeft: number; queueSeq: number | null; deadline: number } | null> {
    const k = lectureKeys(lectureId);
    const reply = await this.redis.consume(
      k.ticket(studentId), k.tickets, k.inflight, k.stats, k.grants, studentId, holdMs,
    ); // prettier-ignore
    if (reply === ScriptError.Missing) return null;
    return { msLeft: reply[0], queueSeq: reply[1] > 0 ? reply[1] : null, deadline: reply[2] };
  }

  /**
   * Puts a consumed ticket back with the lifetime it had left; false if that hold (the one with
   * this deadline) was gone.
   */
  async giveBack(
    lectureId: number,
    studentId: string,
    msLeft: number,
    deadline: number,
  ): Promise<boolean> {
    const k = lectureKeys(lectureId);
    const done = await this.redis.giveBack(
      k.ticket(studentId), k.tickets, k.inflight, k.stats, studentId, msLeft, deadline,
    ); // prettier-ignore
    return done === 1;
  }

  /**
   * Ends holds whose transaction is recorded (the seat is in the lecture's facts now) — each
   * only while it is the hold with that deadline, never a newer one of the same student.
   */
  async release(lectureId: number, holds: readonly HoldRef[]): Promise<void> {
    if (holds.length > 0)
      await this.redis.endHolds(
        lectureKeys(lectureId).inflight,
        ...holds.flatMap((h) => [h.studentId, h.deadline]),
      );
  }

  /** Students whose hold passed its deadline without being recorded, with the deadlines. */
  async lapsed(lectureId: number): Promise<HoldRef[]> {
    // By Redis's clock, not ours.
    const flat = await this.redis.lapsed(lectureKeys(lectureId).inflight);
    const holds: HoldRef[] = [];
    for (let i = 0; i < flat.length; i += 2) {
      holds.push({ studentId: flat[i], deadline: Number(flat[i + 1]) });
    }
    return holds;
  }

  /** A lapsed hold (the one with this deadline) becomes a ticket again: no row was committed for it. */
  async regrant(
    lectureId: number,
    studentId: string,
    ttlMs: number,
    deadline: number,
  ): Promise<boolean> {
    const k = lectureKeys(lectureId);
    const done = await this.redis.regrant(
      k.ticket(studentId), k.tickets, k.inflight, studentId, ttlMs, deadline,
    ); // prettier-ignore
    return done === 1;
  }

  // --- waitlists (API.md v4): who joined while no seat was left

  /**
   * Which of these just-admitted students joined while no seat was left (the join marked them,
   * join-18). Only read: the admission that admitted them takes the marks out once their mails
   * are recorded (unmarkWaitlisted), so a fault in between loses no mail.
   */
  async waitlistedAmong(lectureId: number, studentIds: string[]): Promise<string[]> {
    if (studentIds.length === 0) return [];
    const marked = await this.redis.smismember(lectureKeys(lectureId).waitlisted, ...studentIds);
    return studentIds.filter((_, i) => marked[i] === 1);
  }

  /** Their admission is answered (its mails recorded): the marks go. */
  async unmarkWaitlisted(lectureId: number, studentIds: string[]): Promise<void> {
    if (studentIds.length > 0) await this.redis.srem(lectureKeys(lectureId).waitlisted, ...studentIds); // prettier-ignore
  }
}
