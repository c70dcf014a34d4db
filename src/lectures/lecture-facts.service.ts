import { Injectable, Logger } from '@nestjs/common';
import { LRUCache } from 'lru-cache';
import { AppError, lectureNotFound } from '../common/error-codes';
import { LineStore } from '../line/line.store';
import { lectures } from '../rules/term-rule';
import { LectureFacts } from './lecture-facts';
import { LectureFactsStore, SeatChange } from './lecture-facts.store';
import { LectureSnapshots } from './lecture.snapshots';
import { SeatWatch } from './seat-watch';

/** How long an instance trusts its own copy of a lecture's facts before asking Redis again. */
const CACHE_MS = 500;
/** How long news of a version keeps older copies out: longer than a read on its way takes. */
const NEWS_FLOOR_MS = 5000;
/** Lectures one instance keeps facts of; ids clients make up never stay longer than CACHE_MS. */
const CACHE_SIZE = 10_000;
/** How often at most an id above every known lecture sends PostgreSQL a max(id) query. */
const MAX_ID_REFRESH_MS = 200;
/** Rebuilds refused because a newer commit landed meanwhile are retried this often. */
const REBUILD_TRIES = 5;

type Cached = { facts: LectureFacts } | { missing: true };

/**
 * Lecture facts for the hot path: an in-process copy for CACHE_MS, then Redis, and PostgreSQL
 * only to rebuild Redis (first use, or Redis lost its data), so joining and polling never cost
 * a SQL query each. An id above the highest lecture id costs no query at all.
 */
@Injectable()
export class LectureFactsService {
  private readonly logger = new Logger(LectureFactsService.name);
  private readonly cache = new LRUCache<number, Cached>({ max: CACHE_SIZE, ttl: CACHE_MS });
  private readonly reloads = new Map<number, Promise<LectureFacts | null>>();
  /** Lectures heard full at a version this instance has not read yet: no older copy is kept. */
  private readonly notBefore = new LRUCache<number, number>({ max: CACHE_SIZE, ttl: NEWS_FLOOR_MS }); // prettier-ignore
  /** Lectures committed in PostgreSQL whose facts Redis could not take; retried by the cron. */
  private readonly unsynced = new Set<number>();
  private maxId = { value: 0, at: 0, pending: undefined as Promise<number> | undefined };

  constructor(
    private readonly store: LectureFactsStore,
    private readonly snapshots: LectureSnapshots,
    private readonly line: LineStore,
    private readonly seatWatch: SeatWatch,
  ) {}

  /** The facts this instance holds already, or undefined: never a read, never cached by it. */
  peek(id: number): LectureFacts | undefined {
    const hit = this.cache.get(id);
    return hit && 'facts' in hit ? hit.facts : undefined;
  }

  /**
   * An instance took the lecture's last seat, recorded in Redis as `version` before it said so:
   * a copy here older than that is not trusted for CACHE_MS, and for NEWS_FLOOR_MS no older one
   * is kept (a read, a rebuild or an edit's record already on its way when the news came).
   */
  heardFull(id: number, version: number): void {
    this.notBefore.set(id, Math.max(version, this.notBefore.get(id) ?? 0));
    if ((this.peek(id)?.version ?? -1) < version) this.cache.delete(id);
  }

  /**
   * Keeps a copy of the facts for CACHE_MS: never one older than the copy kept already, nor
   * than a version news said Redis holds (whoever read it still gets what they read).
   */
  private remember(facts: LectureFacts): void {
    const newest = Math.max(this.peek(facts.id)?.version ?? -1, this.notBefore.get(facts.id) ?? -1); // prettier-ignore
    if (facts.version >= newest) this.cache.set(facts.id, { facts });
  }

  /** The lecture's facts, or LECTURE_NOT_FOUND. */
  async get(id: number): Promise<LectureFacts> {
    const hit = this.cache.get(id);
    if (hit) {
      if ('missing' in hit) throw lectureNotFound(id);
      return hit.facts;
    }
    // A tombstone says the lecture exists (created or changed lately, perhaps on another
    // instance whose newer id this one has not seen yet): rebuild it without asking max(id).
    const read = await this.store.read(id);
    const facts =
      read.facts ?? (read.known || (await this.mayExist(id)) ? await this.reload(id) : null);
    if (!facts) {
      this.cache.set(id, { missing: true });
      throw lectureNotFound(id);
    }
    this.remember(facts);
    return facts;
  }

  /**
   * A primary section's facts: LECTURE_NOT_FOUND, or SECONDARY_SECTION for a secondary, which
   * has no queue of its own (API.md v4, Sections).
   */
  async getPrimary(id: number): Promise<LectureFacts> {
    const facts = await this.get(id);
    if (facts.primaryIds.length > 0) {
      throw new AppError(
        'SECONDARY_SECTION',
        `lecture ${id} is a secondary section, taken with ${lectures(facts.primaryIds)}: join and enroll there`,
        {},
        { primaryIds: facts.primaryIds },
      );
    }
    return facts;
  }

  /**
   * After a create or an edit committed: tells Redis. The change is done whatever happens here
   * (its answer must say so), so a Redis failure is not thrown: the facts are dropped where
   * that still works, and rebuilt from PostgreSQL by the next reader or the cron's retry.
   */
  async publish(facts: LectureFacts): Promise<void> {
    this.remember(facts);
    try {
      await this.store.record(facts);
    } catch (err) {
      this.unsynced.add(facts.id);
      this.cache.delete(facts.id);
      await this.store.drop(facts.id).catch(() => undefined);
      this.logger.warn(
        `lecture ${facts.id} committed, but Redis did not take it (${(err as Error).message}); ` +
          'it is rebuilt from PostgreSQL when Redis answers',
      );
    }
  }

  /**
   * Records a committed seat change (enroll, cancel, recovery). Throws when Redis fails; false
   * when Redis kept the facts it had (a newer commit's, or none).
   */
  async recordSeats(facts: LectureFacts, change: SeatChange, students: string[]): Promise<boolean> {
    const written = await this.store.record(facts, change, students);
    if (change !== '') await this.seatWatch.changed(facts, students);
    // The committed row is the newest word unless a newer one is cached or in Redis: keeping it
    // (rather than forgetting the lecture) spares every join of a stampede an HGETALL after
    // each enroll. Redis holding a newer one than any copy here: the next reader reads it.
    if (written) this.remember(facts);
    else if ((this.peek(facts.id)?.version ?? -1) <= facts.version) this.cache.delete(facts.id);
    return written;
  }

  /**
   * Records secondary sections a committed package transaction wrote. They have no queue:
   * their facts are what lists show, so a Redis failure is not thrown — they are dropped,
   * and rebuilt from PostgreSQL by their next reader.
   */
  async recordSections(sections: LectureFacts[], change: SeatChange, students: string[]) {
    for (const f of sections) {
      await this.recordSeats(f, change, students).catch(async () => {
        this.cache.delete(f.id);
        await this.store.drop(f.id).catch(() => undefined);
      });
    }
  }

  /** The row version of the lecture's facts in Redis, read now (null: none there). */
  async versionInRedis(id: number): Promise<number | null> {
    const { facts } = await this.store.read(id);
    return facts?.version ?? null;
  }

  /** Retries the lectures whose facts Redis refused after a commit. Never throws. */
  async retryUnsynced(): Promise<void> {
    for (const id of [...this.unsynced]) {
      try {
        await this.reload(id);
        this.unsynced.delete(id);
      } catch {
        return; // Redis or PostgreSQL still failing: next tick
      }
    }
  }

  /**
   * Rebuilds what Redis holds about a lecture from one PostgreSQL snapshot. Single-flight per
   * lecture: however many requests find the facts missing at once, one snapshot is read.
   */
  reload(id: number): Promise<LectureFacts | null> {
    let pending = this.reloads.get(id);
    if (!pending) {
      pending = this.rebuild(id).finally(() => this.reloads.delete(id));
      this.reloads.set(id, pending);
    }
    return pending;
  }

  private async rebuild(id: number): Promise<LectureFacts | null> {
    for (let i = 0; i < REBUILD_TRIES; i++) {
      const epoch = this.line.connectionEpoch; // before the read: a change meanwhile reads again
      const snapshot = await this.snapshots.withHolders(id);
      if (!snapshot) return null;
      // Refused: a commit newer than the snapshot reached Redis meanwhile; read again.
      const { facts, holders, floor } = snapshot;
      // The order's floor first: with the facts missing no script of the line runs meanwhile.
      await this.line.restoreOrder(id, floor, epoch);
      if (await this.store.rebuild(facts, holders)) return facts;
    }
    // A store that cannot settle is unavailable for this request, not an error of ours (500).
    throw new AppError(
      'UNAVAILABLE',
      `lecture ${id} kept changing while its state was rebuilt; try again`,
    );
  }

  /** False for an id above the highest lecture id, checked at most every MAX_ID_REFRESH_MS. */
  private async mayExist(id: number): Promise<boolean> {
    if (id <= this.maxId.value) return true;
    if (Date.now() - this.maxId.at >= MAX_ID_REFRESH_MS) {
      this.maxId.pending ??= this.snapshots.maxId().finally(() => (this.maxId.pending = undefined));
      const value = await this.maxId.pending;
      this.maxId.value = Math.max(this.maxId.value, value);
      this.maxId.at = Date.now();
    }
    return id <= this.maxId.value;
  }
}
