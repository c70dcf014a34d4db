import { Injectable, Logger, OnModuleDestroy } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { LRUCache } from 'lru-cache';
import { DataSource } from 'typeorm';

/** How long an address seen waits before it is written, with the others seen meanwhile. */
export const CONTACT_FLUSH_MS = 200;
/** After a failed write (PostgreSQL down), the addresses are tried again this much later. */
const RETRY_MS = 2000;
/** Students whose written address this instance remembers; one forgotten costs one upsert. */
const REMEMBERED = 100_000;
/** Addresses waiting to be written at most; beyond, a student's is noted at their next request. */
const MAX_PENDING = 50_000;
/** Rows per statement. */
const CHUNK = 1000;
/**
 * A mail that found no address is tried again when one first arrives this soon after it was
 * recorded (an address seen by an instance whose write had not landed yet); an older one is not
 * sent late ("enroll before your ticket expires" an hour after it did).
 */
const LATE_ADDRESS_WINDOW = '15 minutes';

/**
 * The `email` claim of each student's token, as last seen, in `student_contact`. A request costs
 * a map look-up: an address is written only when this instance has not written it (new or
 * changed), batched every CONTACT_FLUSH_MS into one upsert that changes only rows whose address
 * differs. Writing never fails a request: a failed batch is tried again later.
 */
@Injectable()
export class ContactBook implements OnModuleDestroy {
  private readonly logger = new Logger(ContactBook.name);
  /** the address this instance last wrote (or found already there) per student */
  private readonly written = new LRUCache<string, string>({ max: REMEMBERED });
  private pending = new Map<string, string>();
  private timer?: NodeJS.Timeout;
  private flushing?: Promise<void>;
  private failing = false;
  private stopped = false;

  constructor(@InjectDataSource() private readonly db: DataSource) {}

  note(studentId: string, email: string): void {
    if (this.stopped || this.written.get(studentId) === email) return;
    if (this.pending.get(studentId) === email) return;
    if (this.pending.size >= MAX_PENDING && !this.pending.has(studentId)) return;
    this.pending.set(studentId, email);
    this.schedule(CONTACT_FLUSH_MS);
  }

  /** Writes what is pending now (tests, shutdown). Never throws. */
  async flush(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    while (this.flushing) await this.flushing;
    if (this.pending.size === 0) return;
    this.flushing = this.write().finally(() => (this.flushing = undefined));
    await this.flushing;
  }

  async onModuleDestroy(): Promise<void> {
    this.stopped = true;
    await this.flush();
    clearTimeout(this.timer);
  }

  private schedule(ms: number): void {
    if (this.timer || this.stopped) return;
    this.timer = setTimeout(() => void this.flush(), ms);
    this.timer.unref();
  }

  private async write(): Promise<void> {
    const batch = this.pending;
    this.pending = new Map();
    // In one order everywhere: two instances' upserts of the same students never deadlock.
    const entries = [...batch].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    try {
      for (let i = 0; i < entries.length; i += CHUNK) {
        const chunk = entries.slice(i, i + CHUNK);
        await this.db.query(UPSERT_SQL, [chunk.map(([s]) => s), chunk.map(([, e]) => e)]);
        for (const [s, e] of chunk) {
          batch.delete(s);
          this.written.set(s, e);
        }
      }
      if (this.failing) this.logger.log('student addresses are written again');
      this.failing = false;
    } catch (err) {
      if (!this.failing) {
        this.logger.warn(`student addresses not written, tried again: ${(err as Error).message}`);
      }
      this.failing = true;
      // Put back what was not written, unless a newer address came meanwhile.
      for (const [s, e] of batch) if (!this.pending.has(s)) this.pending.set(s, e);
      if (this.stopped) return;
    }
    if (this.pending.size > 0) this.schedule(this.failing ? RETRY_MS : CONTACT_FLUSH_MS);
  }
}

/**
 * The addresses, each student's row inserted or changed only when it differs (an instance that
 * restarted writes nothing new). A new or changed address makes the student's recent mails that
 * were given up (no address known, the old one refused) due again.
 */
const UPSERT_SQL = `
  WITH changed AS (
    INSERT INTO student_contact AS c (student_id, email, seen_at)
    SELECT student_id, email, now() FROM unnest($1::text[], $2::text[]) AS t(student_id, email)
    ON CONFLICT (student_id) DO UPDATE SET email = EXCLUDED.email, seen_at = EXCLUDED.seen_at
     WHERE c.email IS DISTINCT FROM EXCLUDED.email
    RETURNING c.student_id)
  UPDATE notification n SET next_attempt_at = now(), last_error = NULL
    FROM changed
   WHERE n.student_id = changed.student_id AND n.sent_at IS NULL
     AND n.next_attempt_at = 'infinity' AND n.created_at > now() - interval '${LATE_ADDRESS_WINDOW}'`;
