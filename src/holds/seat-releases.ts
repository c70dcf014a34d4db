import { Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { AppError } from '../common/error-codes';
import { isInfraError } from '../common/infra-errors';
import { LectureFactsService } from '../lectures/lecture-facts.service';
import { AdmissionChannel } from '../news/admission-channel';

/** How often each instance looks for seats given back that Redis never heard of. */
const SWEEP_MS = 1000;
/** A release recorded normally is gone well within this; one older was not recorded. */
export const RELEASE_GRACE_MS = 3000;
/** Releases one sweep settles at most (a bounded time per sweep). */
const SWEEP_LIMIT = 500;

/**
 * The seats given back (seat_release, written in the transaction that gives a seat back), until
 * Redis has heard of them. The instance that committed records the release in Redis at once and
 * notes it here; its row is deleted by the next sweep. A release still there after
 * RELEASE_GRACE_MS was not recorded — the instance died between the commit and Redis, or Redis
 * failed — so any instance's sweep rebuilds that lecture in Redis from PostgreSQL (the student
 * no longer shown holding the seat, the seat counted free), tells the students' streams, and
 * offers the seat to the queue. Idempotent: any number of instances may sweep at once.
 */
@Injectable()
export class SeatReleases implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(SeatReleases.name);
  private timer?: NodeJS.Timeout;
  private sweeping = false;
  /** releases this instance recorded in Redis: their rows go with the next sweep */
  private readonly recordedIds = new Set<string>();

  constructor(
    @InjectDataSource() private readonly db: DataSource,
    private readonly facts: LectureFactsService,
    private readonly channel: AdmissionChannel,
  ) {}

  onApplicationBootstrap(): void {
    this.timer = setInterval(() => void this.sweep(), SWEEP_MS);
    this.timer.unref();
  }

  onApplicationShutdown(): void {
    clearInterval(this.timer);
  }

  /** The release is in Redis: its row may go. */
  recorded(releaseId: string): void {
    this.recordedIds.add(releaseId);
  }

  /** Deletes the recorded releases' rows, then settles the unrecorded ones. Never throws. */
  async sweep(): Promise<void> {
    if (this.sweeping) return;
    this.sweeping = true;
    try {
      await this.forgetRecorded();
      await this.settleUnrecorded();
    } catch (err) {
      // PostgreSQL or Redis down (or a lecture changing too fast to rebuild): the next sweep.
      if (!isInfraError(err) && !(err instanceof AppError))
        this.logger.error(`seat release sweep: ${(err as Error).message}`);
    } finally {
      this.sweeping = false;
    }
  }

  private async forgetRecorded(): Promise<void> {
    const ids = [...this.recordedIds];
    if (ids.length === 0) return;
    await this.db.query('DELETE FROM seat_release WHERE id = ANY ($1::bigint[])', [ids]);
    for (const id of ids) this.recordedIds.delete(id);
  }

  private async settleUnrecorded(): Promise<void> {
    const rows: Release[] = await this.db.query(
      `SELECT id, lecture_id AS "lectureId", student_id AS "studentId", version FROM seat_release
        WHERE released_at < now() - $1 * interval '1 millisecond' ORDER BY id LIMIT ${SWEEP_LIMIT}`,
      [RELEASE_GRACE_MS],
    );
    const byLecture = new Map<number, Release[]>();
    for (const r of rows) byLecture.set(r.lectureId, [...(byLecture.get(r.lectureId) ?? []), r]);
    // One lecture at a time, each on its own: one that cannot be rebuilt now (a hot lecture
    // changing faster than a rebuild, its shard down) does not hold back the others.
    for (const [lectureId, releases] of byLecture) {
      await this.settleLecture(lectureId, releases).catch((err: Error) => {
        if (!isInfraError(err) && !(err instanceof AppError)) {
          this.logger.error(`seat releases of lecture ${lectureId}: ${err.message}`);
        }
      });
    }
  }

  /**
   * Rebuilds the lecture from a PostgreSQL snapshot, then deletes the releases Redis now has: a
   * release's row goes only once Redis holds a version of the lecture at least the release's
   * own (a rebuild joined while already in flight may have read a snapshot from before it).
   */
  private async settleLecture(lectureId: number, releases: Release[]): Promise<void> {
    await this.facts.reload(lectureId);
    const inRedis = await this.facts.versionInRedis(lectureId);
    const recorded = releases.filter((r) => inRedis !== null && inRedis >= r.version);
    if (recorded.length === 0) return; // the next sweep rebuilds again
    await this.channel.studentsChanged(lectureId, recorded.map((r) => r.studentId)); // prettier-ignore
    await this.channel.slotFreed(lectureId);
    await this.db.query('DELETE FROM seat_release WHERE id = ANY ($1::bigint[])', [
      recorded.map((r) => r.id),
    ]);
    this.logger.warn(
      `lecture ${lectureId}: ${recorded.length} seats given back were not recorded in Redis; rebuilt from PostgreSQL`,
    );
  }
}

interface Release {
  id: string;
  lectureId: number;
  studentId: string;
  /** the lecture row's version the release committed */
  version: number;
}
