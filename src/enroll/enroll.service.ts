import { Injectable } from '@nestjs/common';
import { AppError, ErrorExtra, lectureNotFound } from '../common/error-codes';
import { infraStore, isInfraError } from '../common/infra-errors';
import { Hold, Holds } from '../holds/holds.service';
import { OutcomeUnknown } from '../holds/outcome-unknown';
import { LectureFacts } from '../lectures/lecture-facts';
import { LectureFactsService } from '../lectures/lecture-facts.service';
import { SeatWatch } from '../lectures/seat-watch';
import { MetricsService } from '../metrics/metrics.service';
import { AdmissionChannel } from '../news/admission-channel';
import { NotificationsService } from '../notifications/notifications.service';
import { ChosenEnroll, EnrollBatcher } from './enroll-batcher';
import { EnrollOutcome, EnrollRequest, RefusalDetail, isRefusal } from './enroll-statement';
import { CancelOutcome, ExchangeOutcome, SeatTransactions, SwapOutcome } from './seat.transactions';

export class MyEnrollment {
  lectureId: number;
  title: string;
  enrolledAt: string;
}

export class MyEnrollments {
  items: MyEnrollment[];
}

export class EnrollView {
  status: 'ENROLLED' | 'ALREADY_ENROLLED';
  lectureId: number;
  enrolledAt: string;
  seatsLeft: number;
  /** a package: the secondary sections taken with the lecture (ids, ascending) */
  sections?: number[];
  /** a swap: the lecture whose seat was given up in the same transaction */
  swappedFrom?: number;
}

/** The answer to PUT /me/enrollments/:id/sections. */
export class SectionsView {
  lectureId: number;
  /** the secondary sections held with the lecture now (ids, ascending) */
  sections: number[];
  seatsLeft: number;
}

type Answer = { created: boolean; view: EnrollView };

/** Told of every seat this instance's enrolls took: the student, the lecture, its term. */
export type EnrolledListener = (lecture: LectureFacts, studentId: string) => void;

@Injectable()
export class EnrollService {
  // One seat transaction at a time per lecture, carrying every enroll that waited for it:
  // pgbench on one row ran ~2.15k/s at 4 clients and 1.2k/s at 64, one enroll per transaction.
  private readonly batcher = new EnrollBatcher((lectureId, batch) => this.commitBatch(lectureId, batch)); // prettier-ignore
  private readonly enrolledListeners: EnrolledListener[] = [];

  constructor(
    private readonly holds: Holds,
    private readonly seats: SeatTransactions,
    private readonly facts: LectureFactsService,
    private readonly channel: AdmissionChannel,
    private readonly metrics: MetricsService,
    private readonly notifications: NotificationsService,
    private readonly seatWatch: SeatWatch,
  ) {}

  /**
   * One lecture's batch, its choices of sections each taking seats in turn in one transaction;
   * each choice's sections recorded as the commit left them, once for all its students.
   */
  private async commitBatch(lectureId: number, batch: ChosenEnroll[]): Promise<EnrollOutcome[]> {
    const choices = new Map<string, { sections: number[]; requests: EnrollRequest[] }>();
    for (const { sections, request } of batch) {
      const key = sections.join(',');
      if (!choices.has(key)) choices.set(key, { sections, requests: [] });
      choices.get(key)!.requests.push(request);
    }
    const each = await this.seats.enrollChoices(lectureId, [...choices.values()]);
    const outcomes = new Map<EnrollRequest, EnrollOutcome>();
    for (const [i, { requests }] of [...choices.values()].entries()) {
      requests.forEach((r, j) => outcomes.set(r, each[i][j]));
      const won = each[i].filter((o) => o.kind === 'ENROLLED');
      const students = requests.filter((_, j) => each[i][j].kind === 'ENROLLED').map((r) => r.studentId); // prettier-ignore
      if (won.length > 0) await this.facts.recordSections(won[0].sections ?? [], 'enrolled', students); // prettier-ignore
      await this.facts.recordSections(each[i][0]?.others ?? [], '', []); // shared sections' primaries
    }
    if (batch.some(({ request }) => request.auto && outcomes.get(request)?.kind === 'ENROLLED')) this.notifications.committed(); // prettier-ignore
    return batch.map(({ request }) => outcomes.get(request)!);
  }

  /** Listens to every enrollment this instance commits (a swap's too). */
  onEnrolled(listener: EnrolledListener): void {
    this.enrolledListeners.push(listener);
  }

  /**
   * Consume the ticket first (one DEL only one request wins), then the row-locked transaction.
   * A failure that is not the student's gives the ticket back and answers UNAVAILABLE.
   */
  async enroll(
    lectureId: number,
    studentId: string,
    { swapFrom, sections, auto = false }: { swapFrom?: number; sections?: number[]; auto?: boolean } = {}, // prettier-ignore
  ): Promise<Answer> {
    // LECTURE_NOT_FOUND, SECONDARY_SECTION and COMPONENT_REQUIRED before any ticket
    const lecture = await this.facts.getPrimary(lectureId);
    const chosen = chosenPackage(lecture, sections ?? [], { whole: true });
    if (swapFrom !== undefined) {
      if (swapFrom === lectureId) {
        throw new AppError('VALIDATION_FAILED', 'swapFrom must be another lecture than the one enrolled in'); // prettier-ignore
      }
      // A secondary is given up with its primary only: swap from that.
      const from = await this.facts.getPrimary(swapFrom);
      // Before the ticket is touched (API.md v4); the transaction checks it again.
      if (from.term !== lecture.term) throw otherTerm(swapFrom);
    }
    try {
      const result = await this.consumeAndEnroll(lectureId, studentId, swapFrom, chosen, auto);
      this.metrics.enrollOutcome(lectureId, result.view.status);
      if (result.created)
        for (const listener of this.enrolledListeners) listener(lecture, studentId);
      return result;
    } catch (err) {
      this.metrics.enrollOutcome(lectureId, err instanceof AppError ? err.code : 'ERROR');
      throw err;
    } finally {
      // Whatever happened, the student's live streams re-read their status.
      void this.channel.studentsChanged(lectureId, [studentId]);
    }
  }

  private async consumeAndEnroll(
    lectureId: number,
    studentId: string,
    swapFrom: number | undefined,
    sections: number[],
    auto: boolean,
  ): Promise<Answer> {
    const hold = await this.holds.take(lectureId, studentId);
    if (hold === null) return this.withoutTicket(lectureId, studentId);
    const request = { studentId, deadline: hold.deadline, queueSeq: hold.queueSeq, auto };
    const faulted = async (err: unknown): Promise<never> => {
      if (!isInfraError(err)) throw err;
      this.metrics.storeError(infraStore(err));
      throw await this.unavailable(hold, 'the database could not take the enrollment', err);
    };
    if (swapFrom === undefined) {
      const outcome = await this.batcher.submit(lectureId, sections, request).catch(faulted);
      return this.answer(hold, outcome, sections);
    }

    const swapped = await this.swap(lectureId, swapFrom, request, sections).catch(faulted);
    switch (swapped.kind) {
      case 'SWAPPED': {
        const { taken, freed } = swapped;
        if (auto) this.notifications.committed(); // its ENROLLED mail went in with the swap
        await this.holds.settle(hold, taken.lecture, true);
        await this.facts.recordSections(swapped.sections, 'enrolled', [studentId]);
        await this.facts.recordSections(swapped.written, 'cancelled', [studentId]);
        // The seat given up goes to the next student of its queue, as a cancel's does.
        await this.holds.seatFreed(freed.lecture, studentId, freed.releaseId);
        const v = view('ENROLLED', lectureId, taken.enrolledAt, taken.lecture.seatsLeft);
        return { created: true, view: { ...v, ...sectionsOf(sections), swappedFrom: swapFrom } };
      }
      case 'NOT_ENROLLED':
        await this.holds.giveBack(hold);
        throw new AppError('NOT_ENROLLED', `you hold no seat in lecture ${swapFrom} to swap from`);
      case 'OTHER_TERM':
        await this.holds.giveBack(hold);
        throw otherTerm(swapFrom);
      case 'KEPT':
        return this.answer(hold, swapped.outcome, sections);
      case 'RETRY':
        throw await this.unavailable(hold, `your sections of lecture ${swapFrom} kept changing while swapping`); // prettier-ignore
    }
  }

  /** The swap, with the sections held in `swapFrom` read anew while they change meanwhile. */
  private async swap(
    lectureId: number,
    swapFrom: number,
    request: EnrollRequest,
    sections: number[],
  ): Promise<SwapOutcome> {
    let outcome: SwapOutcome = { kind: 'RETRY' };
    for (let i = 0; i < HELD_TRIES && outcome.kind === 'RETRY'; i++) {
      const fromSections = await this.seats.heldSections(swapFrom, request.studentId);
      outcome = await this.seats.swap(lectureId, swapFrom, request, { sections, fromSections });
    }
    return outcome;
  }

  /** The answer to one seat transaction's outcome, the ticket's fate settled first. */
  private async answer(hold: Hold, outcome: EnrollOutcome, sections: number[]): Promise<Answer> {
    const { lectureId } = hold;
    if (isRefusal(outcome)) {
      // A rule refused: the student may drop or swap and come back without queueing again.
      const kept = await this.holds.giveBack(hold);
      const ticket = kept
        ? `your ticket is kept until ${new Date(Date.now() + hold.msLeft).toISOString()}`
        : `your ticket is given back within ${this.holds.holdMs / 1000} s`;
      throw new AppError(outcome.kind, `${outcome.message}; ${ticket}`, {}, extraOf(outcome));
    }
    switch (outcome.kind) {
      case 'ENROLLED':
      case 'ALREADY_ENROLLED': {
        await this.holds.settle(hold, outcome.lecture, true);
        const created = outcome.kind === 'ENROLLED';
        const v = view(outcome.kind, lectureId, outcome.enrolledAt, outcome.lecture.seatsLeft);
        return { created, view: created ? { ...v, ...sectionsOf(sections) } : v };
      }
      case 'FULL':
        if (outcome.fullId !== undefined) return this.sectionFull(hold, outcome, outcome.fullId);
        await this.holds.settle(hold, outcome.lecture, false);
        throw new AppError('FULL', 'no seat is left');
      case 'CLOSED':
        await this.holds.settle(hold, outcome.lecture, false);
        throw new AppError('CLOSED', 'enrollment has closed');
      case 'NOT_OPEN':
        // The admin moved the window after this admission: not the student's doing.
        await this.holds.giveBack(hold);
        throw new AppError('NOT_OPEN', 'enrollment has not opened yet');
      case 'SECONDARY_SECTION':
        await this.holds.giveBack(hold); // made a secondary since: the primaries are the way in
        throw secondarySection(outcome.lecture);
      case 'COMPONENT_REQUIRED':
        await this.holds.giveBack(hold); // the sections changed under the choice: choose again
        throw componentRequired(outcome.lecture, true);
      case 'TOO_LATE':
        throw await this.unavailable(hold, 'the enrollment waited too long');
      case 'NOT_FOUND':
        throw lectureNotFound(lectureId);
    }
  }

  /**
   * A secondary section of the package had no seat: the ticket is kept while another section
   * of its component naming the lecture has one (the student may choose it), and ends as a
   * plain FULL's does when none has.
   */
  private async sectionFull(
    hold: Hold,
    outcome: EnrollOutcome & { kind: 'FULL' },
    fullId: number,
  ): Promise<never> {
    const extra = { lectureId: fullId };
    const others = await this.seats.otherSeats(hold.lectureId, fullId).catch(() => 0);
    if (others > 0 && (await this.holds.giveBack(hold))) {
      const until = new Date(Date.now() + hold.msLeft).toISOString();
      throw new AppError('FULL', `section ${fullId} has no seat left; choose another of its component: your ticket is kept until ${until}`, {}, extra); // prettier-ignore
    }
    await this.holds.settle(hold, outcome.lecture, false);
    throw new AppError('FULL', `section ${fullId} has no seat left, nor does any other of its component`, {}, extra); // prettier-ignore
  }

  /**
   * No ticket: the answer for a student who already holds a seat; else NOT_OPEN before opening,
   * CLOSED after closing (the closed lecture's clean-up deletes unused tickets first, so a
   * student who held one must still hear why), and NO_TICKET in between.
   */
  private async withoutTicket(lectureId: number, studentId: string): Promise<Answer> {
    const enrolledAt = await this.seats.enrolledAt(lectureId, studentId);
    const { seatsLeft, opensAt, closesAt } = await this.facts.get(lectureId);
    const now = Date.now();
    // Nobody is admitted before opening (the pre-queue included): say so rather than NO_TICKET.
    if (!enrolledAt && now < opensAt) {
      throw new AppError('NOT_OPEN', 'enrollment has not opened yet');
    }
    if (!enrolledAt && closesAt !== null && now >= closesAt) {
      throw new AppError('CLOSED', 'enrollment has closed');
    }
    if (!enrolledAt) {
      throw new AppError('NO_TICKET', 'no valid admission ticket: join the queue and wait to be admitted');
    } // prettier-ignore
    return { created: false, view: view('ALREADY_ENROLLED', lectureId, enrolledAt, seatsLeft) };
  }

  /**
   * Deletes the enrollment — a package's secondary sections with it — and gives the seats
   * back; the queue moves on at once.
   */
  async cancel(lectureId: number, studentId: string): Promise<void> {
    await this.facts.getPrimary(lectureId);
    let outcome: CancelOutcome = { kind: 'RETRY' };
    for (let i = 0; i < HELD_TRIES && outcome.kind === 'RETRY'; i++) {
      const sections = await this.seats.heldSections(lectureId, studentId);
      outcome = await this.seats.cancel(lectureId, studentId, sections);
    }
    if (outcome.kind === 'RETRY') throw heldChanging(lectureId);
    if (outcome.kind === 'NOT_ENROLLED')
      throw new AppError('NOT_ENROLLED', 'you hold no seat in this lecture');
    await this.facts.recordSections(outcome.written, 'cancelled', [studentId]);
    await this.holds.seatFreed(outcome.lecture, studentId, outcome.releaseId);
  }

  /**
   * PUT /me/enrollments/:id/sections: the held sections of the named components exchanged for
   * the named ones, in one transaction, under the enroll's rules; no ticket needed.
   */
  async exchange(lectureId: number, studentId: string, sections: number[]): Promise<SectionsView> {
    const lecture = await this.facts.getPrimary(lectureId);
    const chosen = chosenPackage(lecture, sections, { whole: false });
    let outcome: ExchangeOutcome = { kind: 'RETRY' };
    for (let i = 0; i < HELD_TRIES && outcome.kind === 'RETRY'; i++) {
      const held = await this.seats.heldSections(lectureId, studentId);
      outcome = chosen.every((s) => held.includes(s))
        ? await this.unchanged(lecture, studentId, held)
        : await this.seats.exchange(lectureId, studentId, chosen, held);
    }
    switch (outcome.kind) {
      case 'EXCHANGED':
        // The primary's package seats changed: its facts go first, so admission counts them.
        await this.facts.recordSections([outcome.lecture, ...outcome.written], '', []);
        await this.seatWatch.changed(outcome.lecture, [studentId]); // its meetings changed
        void this.channel.studentsChanged(lectureId, [studentId]);
        void this.holds.slotFreed(lectureId); // a section's seat given back may seat a package
        return { lectureId, sections: outcome.sections, seatsLeft: outcome.lecture.seatsLeft };
      case 'RETRY':
        throw heldChanging(lectureId);
      case 'NOT_ENROLLED':
        throw new AppError('NOT_ENROLLED', 'you hold no seat in this lecture');
      case 'KEPT':
        throw refusedExchange(outcome.outcome);
    }
  }

  /** Every named section held already: nothing to exchange (NOT_ENROLLED without the lecture). */
  private async unchanged(lecture: LectureFacts, studentId: string, held: number[]) {
    const enrolledAt = await this.seats.enrolledAt(lecture.id, studentId);
    if (!enrolledAt) return { kind: 'NOT_ENROLLED' as const };
    return { kind: 'EXCHANGED' as const, lecture, sections: held, written: [] };
  }

  async enrollmentsOf(studentId: string): Promise<MyEnrollments> {
    const rows = await this.seats.enrollmentsOf(studentId);
    return { items: rows.map((r) => ({ ...r, enrolledAt: r.enrolledAt.toISOString() })) };
  }

  /**
   * The 503 for a transaction that did not commit: the ticket given back when it can be. One
   * whose commit's fate is unknown keeps its hold until recovery reads PostgreSQL.
   */
  private async unavailable(hold: Hold, why: string, err?: unknown): Promise<AppError> {
    const later = `your admission is settled within ${this.holds.holdMs / 1000} s`;
    if (err instanceof OutcomeUnknown) {
      return new AppError('UNAVAILABLE', `${why}; whether it committed is not known yet: ${later}`); // prettier-ignore
    }
    const kept = await this.holds.giveBack(hold);
    return new AppError('UNAVAILABLE', kept ? `${why}; your ticket was kept, try again` : `${why}; ${later}`); // prettier-ignore
  }
}

/**
 * The secondary sections named for a primary, ascending, when they are one of each of its
 * components (`whole`: each component named; else some), every one a secondary of it;
 * otherwise COMPONENT_REQUIRED listing the choices.
 */
function chosenPackage(
  lecture: LectureFacts,
  sections: number[],
  { whole }: { whole: boolean },
): number[] {
  const { componentOf, count } = componentsOf(lecture);
  const named = sections.map((s) => componentOf.get(s));
  const distinct = new Set(named);
  const ok =
    named.every((c) => c !== undefined) &&
    distinct.size === sections.length &&
    (!whole || distinct.size === count) &&
    (whole || sections.length > 0);
  if (!ok) throw componentRequired(lecture, whole);
  return sections.length < 2 ? sections : [...sections].sort((a, b) => a - b);
}

/** Each secondary's component, per facts object (a hot lecture's are read by every enroll). */
const components = new WeakMap<LectureFacts, { componentOf: Map<number, string>; count: number }>();

function componentsOf(lecture: LectureFacts) {
  let known = components.get(lecture);
  if (!known) {
    const entries = Object.entries(lecture.components);
    const componentOf = new Map(entries.flatMap(([c, ids]) => ids.map((id) => [id, c] as const)));
    known = { componentOf, count: entries.length };
    components.set(lecture, known);
  }
  return known;
}

/** COMPONENT_REQUIRED with the lecture's choices. */
function componentRequired(lecture: LectureFacts, whole: boolean): AppError {
  const choices = lecture.components;
  const listed = Object.entries(choices).map(([c, ids]) => `${c}: ${ids.join(', ')}`).join('; '); // prettier-ignore
  const what = Object.keys(choices).length === 0
    ? `lecture ${lecture.id} has no secondary sections: enroll without sections`
    : `choose one section of ${whole ? 'each' : 'some'} component of lecture ${lecture.id} (${listed})`; // prettier-ignore
  return new AppError('COMPONENT_REQUIRED', what, {}, { components: choices });
}

/** What a refusal's body carries besides its message: the lectures in the way, holds, opensAt. */
function extraOf(outcome: Extract<EnrollOutcome, RefusalDetail>): ErrorExtra {
  return { ...(outcome.conflictsWith ? { conflictsWith: outcome.conflictsWith } : {}), ...outcome.extra }; // prettier-ignore
}

/** Only a package's answer names its sections. */
const sectionsOf = (sections: number[]) => (sections.length > 0 ? { sections } : {});

/** An exchange refused: the enroll's refusals, without a ticket to speak of. */
function refusedExchange(outcome: EnrollOutcome): AppError {
  if (isRefusal(outcome)) return new AppError(outcome.kind, outcome.message, {}, extraOf(outcome));
  switch (outcome.kind) {
    case 'FULL':
      return new AppError('FULL', `section ${outcome.fullId ?? ''} has no seat left`.replace('  ', ' '), {}, outcome.fullId !== undefined ? { lectureId: outcome.fullId } : {}); // prettier-ignore
    case 'CLOSED':
      return new AppError('CLOSED', 'enrollment has closed');
    case 'NOT_OPEN':
      return new AppError('NOT_OPEN', 'enrollment has not opened yet');
    case 'COMPONENT_REQUIRED':
      return componentRequired(outcome.lecture, false);
    default:
      return new AppError('UNAVAILABLE', 'the exchange could not be settled; try again');
  }
}

/** Tries of a cancel, swap or exchange whose held sections changed between read and lock. */
const HELD_TRIES = 3;

const heldChanging = (lectureId: number) =>
  new AppError('UNAVAILABLE', `your sections of lecture ${lectureId} kept changing; try again`);

function secondarySection(lecture: LectureFacts): AppError {
  return new AppError('SECONDARY_SECTION', `lecture ${lecture.id} is a secondary section: enroll in ${lecture.primaryIds.join(' or ')}`, {}, { primaryIds: lecture.primaryIds }); // prettier-ignore
}

const otherTerm = (swapFrom: number) =>
  new AppError('VALIDATION_FAILED', `swapFrom: lecture ${swapFrom} is in another term`);

function view(
  status: EnrollView['status'],
  lectureId: number,
  enrolledAt: Date,
  seatsLeft: number,
): EnrollView {
  return { status, lectureId, enrolledAt: enrolledAt.toISOString(), seatsLeft };
}
