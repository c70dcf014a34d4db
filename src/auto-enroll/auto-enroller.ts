import { randomUUID } from 'node:crypto';
import { Inject, Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { AppError } from '../common/error-codes';
import { isInfraError } from '../common/infra-errors';
import { EnrollService } from '../enroll/enroll.service';
import { LectureFacts } from '../lectures/lecture-facts';
import { LectureFactsService } from '../lectures/lecture-facts.service';
import { SeatWatch } from '../lectures/seat-watch';
import { AdmissionChannel } from '../news/admission-channel';
import { NotificationsService } from '../notifications/notifications.service';
import type { NewNotification } from '../notifications/notification.types';
import { AdmissionService } from '../queue/admission.service';
import { AutoEnrollRoom } from '../queue/auto-enroll-room';
import { QueueService } from '../queue/queue.service';
import { LineStore } from '../line/line.store';
import { AutoEnrollStore } from './auto-enroll.store';
import type { AutoSettings, LastRefusal } from './auto-enroll.types';
import { TimetableFit } from './timetable-fit';
import { Clearance } from './clearance';

/** Tries of an auto-enroll a store fault refused (UNAVAILABLE), while the ticket lives. */
const FAULT_TRIES = 8;
const FAULT_PAUSE_MS = 250;
/**
 * A ticket of an auto-enrolling student still unused this long after its grant is enrolled by
 * the cron's safety net on any instance (the granting instance died or gave up on a fault).
 */
export const SAFETY_NET_AFTER_MS = 2_000;
const SAFETY_NET_AT_ONCE = 200;

/**
 * The service enrolling students itself when their turn comes (API.md v4): an admitted student
 * who asked for it is enrolled exactly as their own POST …/enroll would (EnrollService: the
 * ticket's DEL first, the seat transaction, the group commit), on the instance that granted the
 * ticket; a refusal gives the place up at once, with the reason kept for the student; after
 * every seat, the places that can no longer fit are given up (AtTheLimit).
 */
@Injectable()
export class AutoEnroller implements OnApplicationBootstrap {
  private readonly logger = new Logger(AutoEnroller.name);
  /** `<lecture>:<student>` enrolls this instance has running: one at a time each */
  private readonly running = new Set<string>();
  /** the students (and terms) whose seat committed since the last judging at the limit */
  private readonly atLimit = new Map<string, [studentId: string, term: string]>();
  /** a judging at the limit runs (or is about to): later seats wait for the next */
  private judging = false;

  constructor(
    private readonly admission: AdmissionService,
    private readonly enrollments: EnrollService,
    private readonly queue: QueueService,
    private readonly store: AutoEnrollStore,
    private readonly facts: LectureFactsService,
    private readonly channel: AdmissionChannel,
    private readonly notifications: NotificationsService,
    private readonly fit: TimetableFit,
    private readonly line: LineStore,
    private readonly room: AutoEnrollRoom,
    private readonly clearance: Clearance,
    private readonly seatWatch: SeatWatch,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  onApplicationBootstrap(): void {
    this.admission.onAdmitted((lectureId, students, mode, counted, grantedAt) => {
      void this.admitted(lectureId, students, mode, counted, grantedAt);
    });
    this.enrollments.onEnrolled((lecture, studentId) => void this.enrolled(lecture, studentId));
    // Seats changed by any other hand: the mirror the clearance keeps of them goes — told by every
    // instance, clearing or not, since any instance's clearing may read it.
    this.seatWatch.listen((lecture, students) => this.clearance.forget(lecture.term, lecture.id, students)); // prettier-ignore
    // AUTO_ENROLL_CLEARANCE: no ticket for an enroll the timetable would refuse (clearance.ts);
    // a place its held seats refuse is given up as a refused enroll's is, without the ticket.
    if (!this.config.autoEnrollClearance) return;
    // The mirror is read ahead of the student's turn, when they take a place that auto-enrolls.
    this.store.onPlaceNoted((term, studentId) => this.clearance.warm(studentId, term));
    this.admission.clearWith({
      // (a refusal's mail and news aside: the admission waits only for the place to go)
      clear: (lectureId, students) =>
        this.clearance.clear(lectureId, students, (studentId, refusal) =>
          this.giveUp(lectureId, studentId, refusal, undefined, true),
        ),
      unused: async (lectureId, students) => this.kick(await this.clearance.release(lectureId, students, 'unused')), // prettier-ignore
    });
  }

  /** Lectures whose head waited on a claim that went: admitted again, wherever they are followed. */
  private kick(lectureIds: number[]): void {
    for (const id of lectureIds) void this.channel.slotFreed(id).catch(() => undefined);
  }

  /**
   * The student's claim on the lecture goes: their enroll there is over (clearance.ts),
   * `committed` a seat.
   */
  private async release(lectureId: number, studentId: string, committed: boolean): Promise<void> {
    try {
      this.kick(await this.clearance.release(lectureId, [studentId], 'release', committed));
    } catch (err) {
      // It expires in CLAIM_MS: until then it may hold the student's other places back.
      this.logger.warn(`claim of ${studentId} in lecture ${lectureId}: ${(err as Error).message}`);
    }
  }

  /**
   * After an admission run: its auto-enrolling students; after a tick's, the safety net. The
   * `counted` of them hold AutoEnrollRoom until their first enroll attempt is over.
   */
  private async admitted(
    lectureId: number,
    students: string[],
    mode: 'tick' | 'event',
    counted: number,
    // When their room was lent, not when the admission's news went out: a room lent before a
    // shrink is the bigger room's, whenever its call answered (AutoEnrollRoom.done).
    grantedAt: number,
  ) {
    let uncounted = counted;
    const release = () => {
      if (uncounted <= 0) return;
      uncounted -= 1;
      this.room.done(1, grantedAt); // how long it waited tells the room its size
    };
    try {
      const autos = await this.store.autoAmong(lectureId, students);
      const granted = autos.map((a) => a.studentId);
      if (mode === 'tick') {
        // Tickets granted this long ago and still unused: their granter did not enroll them
        // (or, of a place the service gave up, did not get to leave it: it goes now).
        const { ticketTtlSeconds } = await this.facts.get(lectureId);
        const latestExpiry = Date.now() + ticketTtlSeconds * 1000 - SAFETY_NET_AFTER_MS;
        const lapsing = await this.store.due(lectureId, latestExpiry, SAFETY_NET_AT_ONCE);
        for (const d of lapsing) {
          if (students.includes(d.studentId)) continue;
          if (d.settings) autos.push({ studentId: d.studentId, settings: d.settings });
          else await this.queue.leave(lectureId, d.studentId);
        }
      }
      // Settings that went between the grant and this read: that room frees at once.
      this.room.done(Math.max(0, uncounted - granted.length));
      uncounted = Math.min(uncounted, granted.length);
      const enrolls = autos.map((a) => {
        const counts = granted.includes(a.studentId);
        return this.enrollOne(lectureId, a.studentId, a.settings, counts ? once(release) : undefined); // prettier-ignore
      });
      // Every enroll is over before the room left counted goes back, whatever the mails did.
      const settled = await Promise.allSettled([Promise.all(enrolls), this.waitlistAdmitted(lectureId, students, granted)]); // prettier-ignore
      for (const s of settled) if (s.status === 'rejected') throw s.reason;
    } catch (err) {
      this.logger.warn(`auto-enroll in lecture ${lectureId}: ${(err as Error).message}`);
    } finally {
      this.room.done(uncounted); // what a fault before the enrolls left counted
      uncounted = 0;
    }
  }

  /**
   * The admitted students who joined while no seat was left and do not auto-enroll are told
   * by mail to enroll before their ticket expires (API.md v4, notifications).
   */
  private async waitlistAdmitted(lectureId: number, students: string[], autos: string[]) {
    if (students.length === 0) return;
    const marked = await this.line.waitlistedAmong(lectureId, students);
    const waitlisted = marked.filter((s) => !autos.includes(s));
    try {
      if (waitlisted.length === 0) return;
      const { ticketTtlSeconds } = await this.facts.get(lectureId);
      const until = new Date(Date.now() + ticketTtlSeconds * 1000).toISOString();
      const title = await this.titleOf(lectureId);
      await this.recordMails(
        waitlisted.map((studentId) => ({
          studentId,
          kind: 'ADMITTED' as const,
          lectureId,
          subject: `A seat in ${title} is yours to take`,
          text: `A seat came back in lecture ${lectureId} (${title}), which you joined while it was full: enroll before your ticket expires at ${until}.`, // prettier-ignore
        })),
      );
    } finally {
      // Only once answered (recordMails tries a fault again): a mark kept past this admission
      // would mail the student's next ordinary one as a waitlist's.
      await this.line.unmarkWaitlisted(lectureId, marked);
    }
  }

  /**
   * Records mails outside a seat transaction, tried again on a store fault (as an enroll is)
   * rather than lost: the place they tell of is already given up or granted.
   */
  private async recordMails(items: NewNotification[]): Promise<void> {
    // One key per mail for all its tries: a try whose commit's answer was lost inserts nothing
    // the next time (notification_key_key).
    const keyed = items.map((item) => ({ ...item, key: item.key ?? randomUUID() }));
    for (let tries = 1; ; tries++) {
      try {
        return await this.notifications.record(keyed);
      } catch (err) {
        if (!isInfraError(err) || tries >= FAULT_TRIES) throw err;
        await pause(FAULT_PAUSE_MS * tries);
      }
    }
  }

  private async titleOf(lectureId: number): Promise<string> {
    const titles = await this.fit.titlesOf([lectureId]).catch(() => new Map<number, string>());
    return titles.get(lectureId) || `lecture ${lectureId}`;
  }

  /**
   * Enrolls the admitted student as their own enroll with these settings would. A fault is
   * tried again while the ticket lives; NO_TICKET means the ticket is gone another way (the
   * student's own enroll, another instance's safety net, its expiry): nothing to do.
   */
  private async enrollOne(
    lectureId: number,
    studentId: string,
    settings: AutoSettings,
    tried: () => void = () => undefined,
  ) {
    const key = `${lectureId}:${studentId}`;
    if (this.running.has(key)) return tried();
    this.running.add(key);
    // whether this enroll ends the life of the student's claim on the lecture (clearance.ts)
    let claimed = true;
    let committed = false;
    try {
      for (let tries = 1; ; tries++) {
        if (tries > 1) {
          // The student may have changed their settings (or left) while the fault lasted, or
          // the limit gave the place up meanwhile, its leave finding the ticket in this
          // enroll's hands (given back since by the fault): what is left of the place goes.
          const [now] = await this.store.of(lectureId, [studentId]);
          if (!now.settings) {
            if (now.lastRefusal) await this.queue.leave(lectureId, studentId);
            return;
          }
          settings = now.settings;
        }
        try {
          try {
            await this.enrollments.enroll(lectureId, studentId, { ...settings, auto: true });
          } finally {
            // Its seat transaction is over: the room it held (AutoEnrollRoom) frees, and a
            // fault's retries, the ticket back with the student meanwhile, are not counted.
            tried();
          }
          committed = true;
          const lecture = await this.facts.get(lectureId);
          await this.store.done(lectureId, lecture.term, studentId);
          return;
        } catch (err) {
          if (!(err instanceof AppError)) throw err;
          // The ticket is in other hands (the student's own enroll, another instance's): the
          // claim is not this enroll's to end (clearance.ts; it expires).
          if (err.code === 'NO_TICKET') return void (claimed = false);
          if (err.code === 'UNAVAILABLE') {
            // the ticket (or the hold's recovery) stays theirs, and so does the claim
            if (tries >= FAULT_TRIES) return void (claimed = false);
            await pause(FAULT_PAUSE_MS * tries);
            continue;
          }
          await this.giveUp(lectureId, studentId, refusalOf(err));
          return;
        }
      }
    } catch (err) {
      this.logger.warn(`auto-enroll of ${studentId} in lecture ${lectureId}: ${(err as Error).message}`); // prettier-ignore
    } finally {
      this.running.delete(key);
      tried(); // a return before the first try (the settings went meanwhile)
      if (claimed && this.config.autoEnrollClearance) await this.release(lectureId, studentId, committed); // prettier-ignore
    }
  }

  /**
   * Gives the student's place up for `refusal`: the reason kept first (their status reads it
   * once NOT_QUEUED), then the place or the ticket given back, so the next student moves up,
   * and the mail recorded: once, by the one give-up that took the settings. A later give-up of
   * the same place (a refusal of an enroll that was in flight when the limit gave the place
   * up, its ticket given back to the student since) leaves what is left of it. `aside`: the mail
   * and the news are not waited for.
   */
  async giveUp(
    lectureId: number,
    studentId: string,
    refusal: LastRefusal,
    knownTitle?: string,
    aside = false,
  ): Promise<void> {
    const lecture = await this.facts.get(lectureId);
    const took = await this.store.gaveUp(lectureId, lecture.term, studentId, refusal);
    if (took === null) return;
    await this.queue.leave(lectureId, studentId);
    if (took === 'again') return;
    const told = this.tellGivenUp(lecture, studentId, refusal, knownTitle);
    if (!aside) return told;
    void told.catch((err: Error) => {
      this.logger.warn(`giving up ${studentId}'s place in lecture ${lectureId}, the mail or news: ${err.message}`); // prettier-ignore
    });
  }

  /** The mail and the news of a place given up. */
  private async tellGivenUp(
    lecture: LectureFacts,
    studentId: string,
    refusal: LastRefusal,
    knownTitle?: string,
  ): Promise<void> {
    const lectureId = lecture.id;
    const title = knownTitle || (await this.titleOf(lectureId));
    await this.recordMails([
      {
        studentId,
        kind: 'GIVEN_UP',
        lectureId,
        subject: `Your place in ${title} was given up`,
        text: `The registration service could not enroll you in lecture ${lectureId} (${title}), and gave your place up so the next student could move up: ${refusal.message} (${refusal.code}). Join again to wait for a seat once this no longer stands in the way.`, // prettier-ignore
      },
    ]);
    await this.channel.studentsChanged(lectureId, [studentId]);
    await this.channel.termChanged(lecture.term, studentId, [lectureId]);
  }

  /**
   * After any seat of the student's: the places that can no longer fit go (API.md v4). Judged
   * for every student whose seat committed meanwhile at once (one PostgreSQL read for all of
   * them, one run at a time): a morning's thousands of seats are as many reads otherwise, each
   * taking a pool connection from the seat transactions.
   */
  private enrolled(lecture: LectureFacts, studentId: string): void {
    this.atLimit.set(`${studentId}\n${lecture.term}`, [studentId, lecture.term]);
    if (this.judging) return;
    this.judging = true;
    setImmediate(() => void this.judgeAtLimit());
  }

  private async judgeAtLimit(): Promise<void> {
    try {
      for (let faults = 0; this.atLimit.size > 0;) {
        const students = [...this.atLimit.values()];
        this.atLimit.clear();
        try {
          await this.giveUpUnfit(students);
          faults = 0;
        } catch (err) {
          this.logger.warn(`places of ${students.length} students at the limit: ${(err as Error).message}`); // prettier-ignore
          // A store fault: judged again with the next (a refusal gives the place up meanwhile).
          if (!isInfraError(err) || ++faults >= FAULT_TRIES) continue;
          for (const [studentId, term] of students) this.atLimit.set(`${studentId}\n${term}`, [studentId, term]); // prettier-ignore
          await pause(FAULT_PAUSE_MS * faults);
        }
      }
    } finally {
      this.judging = false;
    }
  }

  private async giveUpUnfit(students: [string, string][]): Promise<void> {
    // Each student's auto-enrolling places now (a note whose settings went is no place): the
    // lectures noted for each, then each lecture's settings read once for all of its students —
    // a read per student and lecture was a fifth of the morning's Redis calls.
    const noted = new Map<number, string[]>();
    await Promise.all(
      students.map(async ([studentId, term]) => {
        for (const id of await this.store.lecturesOf(studentId, term)) {
          noted.set(id, [...(noted.get(id) ?? []), studentId]);
        }
      }),
    );
    const places = (
      await Promise.all(
        [...noted].map(async ([lectureId, ids]) =>
          (await this.store.autoAmong(lectureId, ids)).map(({ studentId, settings }) => ({
            studentId,
            lectureId,
            swapFrom: settings.swapFrom,
          })),
        ),
      )
    ).flat();
    const unfit = await this.fit.unfit(places);
    const titles = await this.fit
      .titlesOf([...new Set(unfit.map((u) => u.lectureId))])
      .catch(() => new Map<number, string>());
    await Promise.all(
      unfit.map((u) =>
        this.giveUp(u.lectureId, u.studentId, u.refusal, titles.get(u.lectureId)).catch(
          (err: Error) => {
            this.logger.warn(`giving up ${u.studentId}'s place in lecture ${u.lectureId}: ${err.message}`); // prettier-ignore
          },
        ),
      ),
    );
  }
}

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** `f`, called at most once however often the result is. */
function once(f: () => void): () => void {
  let called = false;
  return () => {
    if (called) return;
    called = true;
    f();
  };
}

/** What the student is told of a refusal: the rule's words, without the ticket's fate. */
function refusalOf(err: AppError): LastRefusal {
  const { code, message, conflictsWith } = err.body;
  const words = message.replace(/; your ticket (is|was) .*$/, '');
  return { code, message: words, ...(conflictsWith ? { conflictsWith } : {}) };
}
