import { Inject, Injectable, Logger } from '@nestjs/common';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { AppError } from '../common/error-codes';
import { LectureFactsService } from '../lectures/lecture-facts.service';
import { LectureFacts } from '../lectures/lecture-facts';
import { LecturesService } from '../lectures/lectures.service';
import { OrderFence } from '../lectures/order-fence';
import { MetricsService } from '../metrics/metrics.service';
import { AdmissionChannel } from '../news/admission-channel';
import { DrawSeeds } from '../fairness/draw-seeds';
import { DrawScheduler } from '../fairness/draw.scheduler';
import { Holds } from '../holds/holds.service';
import { AdmissionService } from './admission.service';
import { AdmittedWhileJoining, JoinInProgress } from './admitted-while-joining';
import { ObservedRates } from './observed-rates';
import { LineStore } from '../line/line.store';
import { Place, QueueShape, WindowOpening } from '../line/line.types';
import { RegistrationService } from '../registration/registration.service';
import { AutoEnrollStore } from '../auto-enroll/auto-enroll.store';
import type { AutoSettings, AutoState } from '../auto-enroll/auto-enroll.types';
import { NO_AUTO, QueueStatusView, toQueueStatusView } from './queue-status.view';
import { AutoKnown } from './auto-known';

/** What a live stream was told of a place (a status built without a read of the queue). */
type LiveKnown = Omit<Place, 'seatsLeft' | 'created' | 'roomToAdmit' | 'seq' | 'drew'>;

export class LectureStats {
  /** students in the queue (never those in the pre-queue) */
  waiting: number;
  activeTickets: number;
  enrolled: number;
  seatsLeft: number;
  admittedTotal: number;
  /** students in the pre-queue now (drawn into the queue at opensAt) */
  preQueued: number;
  /** the students waiting while no seat is left (API.md v4, waitlists): 0 while seats are left */
  waitlisted: number;
}

const isClosed = (f: LectureFacts, now = Date.now()) => f.closesAt !== null && now >= f.closesAt;
const closed = () => new AppError('CLOSED', 'enrollment has closed');
const notOpen = () => new AppError('NOT_OPEN', 'enrollment has not opened yet');

@Injectable()
export class QueueService {
  private readonly logger = new Logger(QueueService.name);
  private readonly admittedWhileJoining = new AdmittedWhileJoining();
  private readonly autoKnown = new AutoKnown();

  constructor(
    private readonly line: LineStore,
    private readonly facts: LectureFactsService,
    private readonly lectures: LecturesService,
    private readonly admission: AdmissionService,
    private readonly holds: Holds,
    private readonly channel: AdmissionChannel,
    private readonly seeds: DrawSeeds,
    private readonly draws: DrawScheduler,
    private readonly fence: OrderFence,
    private readonly rates: ObservedRates,
    private readonly registration: RegistrationService,
    private readonly auto: AutoEnrollStore,
    private readonly metrics: MetricsService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {
    channel.onEvent((event) => this.admittedWhileJoining.heard(event));
  }

  /**
   * Joins at the back, or before opensAt the pre-queue; a repeat join returns the current place
   * unchanged (created: false). Redis decides which side of opensAt a join falls on.
   * `planned`: the lecture is in the student's plan for its term (Join all), which a term
   * stream follows anyway, so the join is not noted in the student's lines.
   * `auto` (API.md v4): the join's body — settings to enroll the student when admitted, null
   * not to; undefined (no body) keeps what a repeat join had, and is "not" for a new one.
   */
  async join(
    lectureId: number,
    studentId: string,
    { planned = false, auto }: { planned?: boolean; auto?: AutoSettings | null } = {},
  ): Promise<{ created: boolean; status: QueueStatusView }> {
    const facts = await this.facts.getPrimary(lectureId);
    // The settings are set by the join script itself, with the place (join-18).
    if (auto) await this.auto.notePlace(lectureId, facts.term, studentId);
    return this.joinWith(facts, studentId, planned, auto);
  }

  private async joinWith(
    facts: LectureFacts,
    studentId: string,
    planned: boolean,
    auto: AutoSettings | null | undefined,
  ): Promise<{ created: boolean; status: QueueStatusView }> {
    const lectureId = facts.id;
    // Who may register (API.md v4): HOLD and the student's window before the lecture's own
    // refusals; where the student opens (the lecture's opensAt or their window's).
    let opening: WindowOpening;
    try {
      opening = await this.registration.gate(facts, studentId);
    } catch (err) {
      // A repeat join answers the place the student has (a hold or a window's change drops
      // nobody); a fault answers it too, rather than an UNAVAILABLE that hides it (API.md v3).
      const status = await this.placedAlready(facts, studentId, auto);
      if (status) return { created: false, status };
      throw err;
    }
    // Before the pre-queue's window the join script answers NOT_OPEN, unless the student is
    // pre-queued already (the window shortened since): that join answers their place.
    if (isClosed(facts)) throw closed();
    const join = this.admittedWhileJoining.start(lectureId, studentId);
    try {
      let place = await this.placeOf(facts, studentId, true, opening, auto);
      if (place.state === 'FULL') throw new AppError('FULL', 'no seat is left');
      if (place.state === 'NOT_OPEN') throw notOpen();
      if (place.created && place.state === 'PRE_QUEUED' && opening.window) {
        await this.afterWindowPreQueue(facts, opening.window.opensAt);
      }
      if (place.created) place = await this.afterJoin(facts, studentId, place, planned, join);
      return { created: place.created, status: this.view(lectureId, place, facts) };
    } finally {
      this.admittedWhileJoining.end(lectureId, studentId, join);
    }
  }

  /**
   * The student's status when they have a place in the lecture already, else null; a repeat
   * join's body applied to that place.
   */
  private async placedAlready(
    facts: LectureFacts,
    studentId: string,
    auto: AutoSettings | null | undefined,
  ): Promise<QueueStatusView | null> {
    // The join's body still says what the place does when admitted (join-18 applies it to a
    // place it reads): a student with a hold may turn auto-enroll off.
    const place = await this.placeOf(facts, studentId, false, undefined, auto).catch(() => null);
    const placed = place && ['PRE_QUEUED', 'WAITING', 'ADMITTED', 'ENROLLED'].includes(place.state);
    return placed ? this.view(facts.id, place, facts) : null;
  }

  /**
   * A student entered a window's pre-queue: the draw sweep follows the lecture, and in event
   * modes a timer draws it the moment the window opens. A failure here leaves the draw to the
   * first join after the window's opening, which runs it.
   */
  private async afterWindowPreQueue(facts: LectureFacts, opensAt: number): Promise<void> {
    await this.line.windowPreQueued(facts.id).catch((err: Error) => {
      this.logger.warn(`lecture ${facts.id}: the window draw's listing failed (${err.message})`);
    });
    this.draws.drawWindowsAt(facts.id, opensAt);
  }

  /**
   * What follows a first join: the news, the cron's listing, an admission when there is room.
   * The student is queued by now, so nothing here may turn the answer into a 503 (API.md v3: a
   * join answered UNAVAILABLE changed nothing): a store failing here is logged, the cron and
   * its sweep make up for it, and the answer is the place as last read.
   */
  private async afterJoin(
    facts: LectureFacts,
    studentId: string,
    joined: Place,
    planned: boolean,
    join: JoinInProgress,
  ): Promise<Place> {
    const lectureId = facts.id;
    const warn = (what: string) => (err: Error) =>
      this.logger.warn(`lecture ${lectureId}: ${what} after a join failed (${err.message})`);
    if (joined.state === 'PRE_QUEUED') this.draws.drawAt(lectureId, facts.opensAt);
    // A cluster's sharded channel: events admit here too.
    await this.channel.follow(lectureId).catch(warn('following the news'));
    await this.channel.studentsChanged(lectureId, [studentId]);
    // A term stream of the student's, here or on another instance, follows this lecture now.
    // Not awaited: the join's answer does not wait for it, and a later read of the student's
    // lines goes out on the same connection after it. A planned lecture is followed as planned
    // (and noted by Join all once its joins are done, and if the plan drops it: PlansService).
    if (!planned) {
      void this.line.noteJoined(studentId, facts.term, [lectureId]).catch(warn('noting the join'));
    }
    await this.channel.termChanged(facts.term, studentId, [lectureId]);
    // The join that made the queue non-empty lists the lecture for the cron: a lecture is only
    // unlisted once idle (unwatchIfIdle re-checks), so while anyone waits it stays listed, and
    // the other joins need not touch the one key every lecture shares (on a cluster, one
    // shard's). If this fails the cron's sweep lists the lecture again.
    if (joined.waiting <= 1 || joined.state === 'PRE_QUEUED') {
      await this.line.watch(lectureId).catch(warn('listing for the cron'));
    }
    const again = () =>
      this.placeOf(facts, studentId, false).then(
        (now) => ({ ...now, created: true }),
        () => joined,
      );
    if (!joined.roomToAdmit || !this.channel.enabled) {
      // Another request's admission admitted the student meanwhile (a pre-queued one too: the
      // draw at the opening admits the head at once): its stream said ADMITTED already, and a
      // WAITING or PRE_QUEUED answer arriving after it would undo that on the page.
      const behind = joined.state === 'WAITING' || joined.state === 'PRE_QUEUED';
      return join.admitted && behind ? again() : joined;
    }
    // Free room: admit now instead of at the next tick. Pop-and-grant takes the head of the
    // queue, so whoever is ahead of this student is admitted first and order holds. Its hold
    // recovery needs PostgreSQL, which may be down while Redis answers.
    await this.admission.admit(lectureId, 'event').catch(warn('the admission'));
    // Read the place again even when this admission admitted nobody (or failed): a concurrent
    // join's admission may have admitted this student, who must not be told WAITING.
    return again();
  }

  /** The student's status; once the window has closed, CLOSED for anyone without a seat. */
  async status(lectureId: number, studentId: string): Promise<QueueStatusView> {
    return (await this.statusAndSeq(lectureId, studentId)).status;
  }

  /** The status, and while WAITING the join sequence number live positions are computed from. */
  async statusAndSeq(
    lectureId: number,
    studentId: string,
  ): Promise<{ status: QueueStatusView; seq: number | null }> {
    const facts = await this.facts.getPrimary(lectureId);
    const place = await this.placeOf(facts, studentId, false);
    if (place.state !== 'ENROLLED' && isClosed(facts)) throw closed();
    return { status: this.view(lectureId, place, facts), seq: place.seq };
  }

  /**
   * Many students' statuses in one lecture with one Redis call (live streams' periodic re-read).
   * null for a student whose status needs their own read (an enroll hold lapsed), and for all of
   * them when the lecture has closed or its facts must be rebuilt: `statusAndSeq` does that.
   */
  async statusesOf(
    lectureId: number,
    studentIds: string[],
  ): Promise<({ status: QueueStatusView; seq: number | null } | null)[]> {
    const facts = await this.facts.get(lectureId);
    const none = studentIds.map(() => null);
    if (isClosed(facts)) return none;
    const members = await Promise.all(studentIds.map((s) => this.memberFor(facts, s)));
    const [places, autos] = await Promise.all([
      this.line.places(lectureId, studentIds, members),
      this.auto.of(lectureId, studentIds),
    ]);
    if (!places) return none;
    return places.map((p, i) => {
      if (p.state === 'LAPSED') return null;
      const place: Place = { ...p, created: false, roomToAdmit: false, drew: false };
      const auto = this.known(lectureId, studentIds[i], place, autos[i]);
      return { status: this.view(lectureId, place, facts, auto), seq: place.seq };
    });
  }

  /** The ADMITTED status of a just-granted ticket, as the admission announced it (live streams). */
  admittedView(
    lectureId: number,
    studentId: string,
    expiresAt: number,
    waiting: number,
  ): Promise<QueueStatusView> {
    return this.liveView(lectureId, studentId, {
      state: 'ADMITTED',
      position: null,
      ticketExpiresAt: expiresAt,
      waiting,
      observedRate: null,
    });
  }

  /**
   * A WAITING status from a position computed from the queue's shape, with the lecture's facts
   * already read (live streams: without an await, a tick's frames go out in one turn).
   */
  waitingView(
    facts: LectureFacts,
    studentId: string,
    position: number,
    shape: QueueShape,
  ): QueueStatusView {
    return this.liveViewOf(facts, studentId, {
      state: 'WAITING',
      position,
      ticketExpiresAt: null,
      waiting: shape.waiting,
      observedRate: shape.observedRate,
    });
  }

  /**
   * A status built from what a live stream was told, with seats left from the facts cache and
   * auto-enroll as this instance last read it (no refusal: the student has a place).
   */
  private async liveView(
    lectureId: number,
    studentId: string,
    known: LiveKnown,
  ): Promise<QueueStatusView> {
    return this.liveViewOf(await this.facts.get(lectureId), studentId, known);
  }

  private liveViewOf(facts: LectureFacts, studentId: string, known: LiveKnown): QueueStatusView {
    const lectureId = facts.id;
    const place: Place = {
      ...known,
      seatsLeft: facts.seatsLeft,
      created: false,
      roomToAdmit: false,
      seq: null,
      drew: false,
    };
    const auto = { autoEnroll: this.autoKnown.get(lectureId, studentId), lastRefusal: null };
    return this.view(lectureId, place, facts, auto);
  }

  /** Gives up the place or the unused ticket; the slot goes to the next student. */
  async leave(lectureId: number, studentId: string): Promise<void> {
    const facts = await this.facts.getPrimary(lectureId); // LECTURE_NOT_FOUND before anything
    const member = await this.memberFor(facts, studentId);
    const [{ left, gaveBack }] = await Promise.all([
      this.line.leave(lectureId, studentId, member),
      this.auto.forgetPlace(lectureId, facts.term, studentId),
    ]);
    this.autoKnown.set(lectureId, studentId, false);
    if (left || gaveBack) await this.channel.studentsChanged(lectureId, [studentId]);
    if (gaveBack) {
      this.metrics.ticketEvent(lectureId, 'given_back');
      await this.holds.slotFreed(lectureId);
    }
  }

  /** Seats from PostgreSQL (the truth), queue figures from Redis. */
  async stats(lectureId: number): Promise<LectureStats> {
    const seats = await this.lectures.seatCounts(lectureId);
    const { waiting, activeTickets, admittedTotal, preQueued, waitlisted } = await this.line.counts(
      lectureId,
      seats.seatsLeft,
    );
    return {
      waiting,
      activeTickets,
      enrolled: seats.enrolled,
      seatsLeft: seats.seatsLeft,
      admittedTotal,
      preQueued,
      waitlisted,
    };
  }

  /**
   * The place as Redis has it, after rebuilding the lecture's facts if Redis lost them, and
   * after recovering a lapsed enroll hold (the student is then ENROLLED or ADMITTED again).
   */
  private async placeOf(
    facts: LectureFacts,
    studentId: string,
    join: boolean,
    opening?: WindowOpening,
    auto?: AutoSettings | null,
  ): Promise<Place> {
    const lectureId = facts.id;
    const member = await this.memberFor(facts, studentId);
    // A new join asks whether there is room only when it would admit at once on an event.
    const askRoom = join && this.channel.enabled;
    const read = async () => {
      // A read may run the draw, which hands out queue numbers: the order's floor must hold.
      if (!this.line.orderHeld(lectureId)) await this.fence.hold(lectureId);
      return this.line.place(lectureId, studentId, join, member, askRoom, opening, auto);
    };
    let place = await read();
    if (!place) {
      await this.facts.reload(lectureId);
      place = await read();
    }
    if (place?.drew) void this.draws.drawn(lectureId); // recorded aside: not this join's wait
    if (place?.windowDrew) void this.draws.windowsDrawn(lectureId);
    if (place?.state === 'LAPSED') {
      // Settled from PostgreSQL now where it can be; one that cannot yet (its transaction still
      // holds the student's lock, PostgreSQL's clock is behind Redis's, PostgreSQL is down) is
      // still an enroll in progress: ADMITTED, as before its deadline. The cron settles it.
      await this.holds.recoverLapsed(lectureId).catch((err: Error) => {
        this.logger.warn(`lecture ${lectureId}: hold recovery failed (${err.message})`);
      });
      place = await read();
      if (place?.state === 'LAPSED') place = { ...place, state: 'ADMITTED', ticketExpiresAt: null };
    }
    if (!place) {
      throw new AppError('UNAVAILABLE', 'the queue state could not be rebuilt; try again');
    }
    // Remembered for the streams' pushes built without a read.
    if (place.auto) this.autoKnown.set(lectureId, studentId, place.auto.autoEnroll);
    const observedRate = place.state === 'WAITING' ? await this.rates.of(lectureId) : null;
    return { ...place, observedRate };
  }

  /**
   * The student's pre-queue member, until Redis has been seen drawn: after that no script
   * needs it (the pre-queue is gone), and its HMAC was a twentieth of a join's CPU.
   */
  private memberFor(facts: LectureFacts, studentId: string): Promise<string> | string {
    if (!this.line.drawnSeen(facts.id)) return this.seeds.memberFor(facts, studentId);
    this.seeds.forget(facts.id); // nor are those cached for it needed
    return '';
  }

  /** The status; auto-enroll as given, else as read with the place. */
  private view(
    lectureId: number,
    place: Place,
    facts: LectureFacts,
    auto?: AutoState,
  ): QueueStatusView {
    const nominal = facts.batchSize / (this.config.admission.intervalMs / 1000);
    return toQueueStatusView(lectureId, place, nominal, auto ?? place.auto ?? NO_AUTO);
  }

  /**
   * The auto-enroll state as read beside the place (settings count only with a place, as
   * join-18 answers them), remembered for the streams' pushes built without a read.
   */
  private known(
    lectureId: number,
    studentId: string,
    place: Place,
    read: { settings: AutoSettings | null; lastRefusal: AutoState['lastRefusal'] },
  ): AutoState {
    const placed = ['PRE_QUEUED', 'WAITING', 'ADMITTED'].includes(place.state);
    const autoEnroll = placed && read.settings !== null;
    this.autoKnown.set(lectureId, studentId, autoEnroll);
    return { autoEnroll, lastRefusal: read.lastRefusal };
  }
}
