import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';
import { Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { AdmissionLogStore, LogEntry } from './admission-log.store';
import { FairnessRecords } from './fairness.records';

const INTERVAL_NAME = 'admission-log-copier';
/** How often each instance copies new admissions: well within the second API.md allows. */
export const COPY_INTERVAL_MS = 250;
/** Entries per read; a round reads until a lecture's stream has no more. */
const BATCH = 1000;
/**
 * An entry another consumer read and did not acknowledge for this long is taken over: a live
 * consumer acknowledges within one copy, so only a dead (or cut-off) one leaves entries this old.
 */
export const CLAIM_IDLE_MS = 5000;

/**
 * Copies each lecture's admission stream into PostgreSQL through a consumer group: at least
 * once (an entry is acknowledged only after PostgreSQL stored it), idempotently (its stream id
 * is the row's key), taking over what a dead instance left pending (XAUTOCLAIM), and trimming
 * the stream behind what is stored.
 */
@Injectable()
export class AdmissionLogCopier implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(AdmissionLogCopier.name);
  /** This instance's consumer name: unique per process, so a restart is a new consumer. */
  readonly consumer = `${hostname()}-${process.pid}-${randomUUID().slice(0, 8)}`;
  private readonly grouped = new Set<number>();
  private running = false;

  constructor(
    private readonly log: AdmissionLogStore,
    private readonly records: FairnessRecords,
    private readonly scheduler: SchedulerRegistry,
  ) {}

  onApplicationBootstrap(): void {
    this.scheduler.addInterval(
      INTERVAL_NAME,
      setInterval(() => void this.copyAll(), COPY_INTERVAL_MS),
    );
  }

  onApplicationShutdown(): void {
    if (this.scheduler.doesExist('interval', INTERVAL_NAME)) {
      this.scheduler.deleteInterval(INTERVAL_NAME);
    }
  }

  /** One round over every listed lecture; one that fails stops no other. Never throws. */
  async copyAll(): Promise<void> {
    if (this.running) return;
    this.running = true;
    try {
      for (const id of await this.log.watched()) {
        await this.copy(id).catch((err: Error) => {
          this.logger.warn(`admission log of lecture ${id} not copied this round: ${err.message}`);
        });
      }
    } catch (err) {
      this.logger.warn(`admission log not copied this round: ${(err as Error).message}`);
    } finally {
      this.running = false;
    }
  }

  /** Copies what one lecture's stream holds for this consumer; returns how many entries. */
  async copy(lectureId: number): Promise<number> {
    let copied = 0;
    for (;;) {
      const entries = await this.next(lectureId);
      if (entries === null) return copied;
      if (entries.length === 0) {
        if (copied === 0) await this.log.unwatchIfEmpty(lectureId);
        return copied;
      }
      await this.records.insertAdmissions(lectureId, entries);
      await this.log.ackAndTrim(
        lectureId,
        entries.map((e) => e.id),
      );
      copied += entries.length;
    }
  }

  /**
   * What to copy next: this consumer's own unacknowledged entries (its last copy failed), then
   * a dead consumer's, then new ones. null: the stream and its group are gone (Redis lost its
   * data); they are made again on the next round.
   */
  private async next(lectureId: number): Promise<LogEntry[] | null> {
    try {
      if (!this.grouped.has(lectureId)) {
        await this.log.ensureGroup(lectureId);
        this.grouped.add(lectureId);
      }
      const own = await this.log.ownPending(lectureId, this.consumer, BATCH);
      if (own.length > 0) return own;
      const claimed = await this.log.claim(lectureId, this.consumer, CLAIM_IDLE_MS, BATCH);
      if (claimed.length > 0) return claimed;
      return await this.log.fresh(lectureId, this.consumer, BATCH);
    } catch (err) {
      if (!String((err as Error).message).startsWith('NOGROUP')) throw err;
      this.grouped.delete(lectureId);
      return null;
    }
  }
}
