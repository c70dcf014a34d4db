import {
  Inject,
  Injectable,
  Logger,
  OnApplicationBootstrap,
  OnModuleDestroy,
} from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { createTransport } from 'nodemailer';
import type { NodemailerError, SMTPPoolSentMessageInfo, Transporter } from 'nodemailer';
import type { Pool } from 'pg';
import { DataSource } from 'typeorm';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { notificationSentKey } from '../redis/keys';
import type { RedisClient } from '../redis/redis-client';
import { InjectRedis } from '../redis/redis.token';
import { isInfraError } from '../common/infra-errors';
import { DEFAULT_MAIL_FROM } from '../config/load-config';
import type { Meeting } from '../lectures/meetings';
import type { NotificationKind } from './notification.types';

/** How often an idle sender looks for due mails (a commit nudges it at once). */
export const POLL_MS = 1000;
/** Mails one round claims at most. */
const BATCH = 10;
/**
 * How long a claim keeps other instances off a mail. A send is cut off well before
 * (SEND_DEADLINE_MS), so a live sender always records its outcome first; a dead one's mails are
 * due again this long after it claimed them.
 */
export const LEASE_MS = 120_000;
/** A send's whole time, waiting for a pooled connection included. */
const SEND_DEADLINE_MS = 60_000;
/** The backoff of a failed send: 1 s, doubled per failure, at most 30 s. */
export const BACKOFF_FIRST_MS = 1000;
export const BACKOFF_MAX_MS = 30_000;
/** How long a mail accepted but not recorded as sent is remembered in Redis (a week). */
const SENT_MARK_SECONDS = 7 * 24 * 3600;
/** On shutdown, sends in flight get this long to finish before they are cut off. */
const SHUTDOWN_GRACE_MS = 5000;
/**
 * `last_error` of a mail given up without sending because the student has no known address (no
 * token of theirs carried an `email` claim). It stays unsent (`sent_at` null), due at 'infinity':
 * listed, never tried again — unless an address arrives soon after (contact-book.ts).
 */
export const NO_ADDRESS = 'no e-mail address known for the student';

interface Claimed {
  id: string;
  /**
   * The mail's identity beyond this database's ids (reused after a restore): its id and when it
   * was recorded. Its Message-ID and its sent mark in Redis are named by it.
   */
  mail_id: string;
  student_id: string;
  kind: NotificationKind;
  lecture_id: number;
  subject: string;
  body: string;
  email: string | null;
}

/**
 * Sends the recorded notifications, on the instances that have SMTP_URL: polls every POLL_MS
 * (and when nudged after a commit), claims due unsent rows FOR UPDATE SKIP LOCKED with a lease
 * (`claimed_until`) so no two instances send one row at once, sends each through one pooled
 * nodemailer transport and sets `sent_at` as soon as the server accepted it. A failure is due
 * again after a capped backoff (the mail server down: retried until it answers); a recipient
 * the server refuses for good is given up. Never throws out of its loop; stops on shutdown.
 */
@Injectable()
export class NotificationSender implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger(NotificationSender.name);
  private transport?: Transporter<SMTPPoolSentMessageInfo>;
  private readonly from: string;
  private timer?: NodeJS.Timeout;
  private round?: Promise<void>;
  /** nudged while a round ran: look again at once */
  private again = false;
  private stopped = false;
  /** the mail server failed the last send: its recovery is logged */
  private serverDown = false;
  /** sends cut off on shutdown after the grace */
  private readonly abort = new AbortController();
  /** mails the server accepted whose sent_at could not be written yet (PostgreSQL down) */
  private readonly unrecorded = new Set<string>();
  /** The pool's own queries: TypeORM's answer to an UPDATE … RETURNING is not its rows. */
  private readonly pool: Pool;

  /** the domain of MAIL_FROM, for the mails' Message-IDs */
  private readonly domain: string;

  constructor(
    @InjectDataSource() db: DataSource,
    @InjectRedis() private readonly redis: RedisClient,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {
    this.from = config.mail?.from ?? DEFAULT_MAIL_FROM;
    this.domain = /@([^>\s]+)>?\s*$/.exec(this.from)?.[1] ?? 'localhost';
    this.pool = (db.driver as unknown as { master: Pool }).master;
  }

  onApplicationBootstrap(): void {
    const url = this.config.mail?.smtpUrl;
    if (url === undefined) return;
    this.transport = createTransport({
      url,
      pool: true,
      maxConnections: 5,
      // A connection closed mid-send fails the send (retried by this outbox, which counts it)
      // rather than being sent again by the pool behind its back.
      maxRequeues: 0,
      connectionTimeout: 10_000,
      greetingTimeout: 10_000,
      socketTimeout: 30_000,
      logger: false,
    });
    const { protocol, host } = new URL(url);
    this.logger.log(`sending notifications through ${protocol}//${host} from ${this.from}`);
    this.schedule(0);
  }

  async onModuleDestroy(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.round) {
      let grace: NodeJS.Timeout | undefined;
      const cutOff = new Promise<void>((r) => (grace = setTimeout(r, SHUTDOWN_GRACE_MS)));
      await Promise.race([this.round, cutOff]);
      clearTimeout(grace);
      this.abort.abort(new Error('the service is shutting down'));
      await this.round;
    }
    this.transport?.close();
    this.transport = undefined;
  }

  /** A transaction that recorded notifications committed: look now, not at the next poll. */
  nudge(): void {
    if (!this.transport || this.stopped) return;
    if (this.round) {
      this.again = true;
      return;
    }
    this.schedule(0);
  }

  private schedule(ms: number): void {
    if (this.stopped) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.round = this.run().finally(() => {
        this.round = undefined;
        this.schedule(this.again ? 0 : POLL_MS);
        this.again = false;
      });
    }, ms);
  }

  /** Rounds while full batches (or nudges) come. Never throws. */
  private async run(): Promise<void> {
    try {
      await this.recordUnrecorded();
      for (;;) {
        this.again = false;
        const sent = await this.sendDue();
        if (this.stopped || (sent < BATCH && !this.again)) return;
      }
    } catch (err) {
      // PostgreSQL down, most likely: the next poll.
      const message = (err as Error).message;
      if (isInfraError(err)) this.logger.warn(`notifications not sent this round: ${message}`);
      else this.logger.error(`notifications not sent this round: ${message}`);
    }
  }

  /** Claims up to BATCH due mails and sends them; returns how many it claimed. */
  private async sendDue(): Promise<number> {
    const claimed = (await this.pool.query<Claimed>(CLAIM_SQL, [BATCH, LEASE_MS])).rows;
    const sent = await this.sentBefore(claimed);
    if (sent.length > 0) await this.pool.query(SENT_SQL, [sent]);
    const due = claimed.filter((n) => !sent.includes(n.id));
    // Every send settles before the round ends (none left running into a shutdown).
    const failed = (await Promise.allSettled(due.map((n) => this.sendOne(n)))).find(
      (r) => r.status === 'rejected',
    );
    if (failed) throw failed.reason;
    return claimed.length;
  }

  /**
   * The claimed mails a sender already had accepted while PostgreSQL could not record it (its
   * lease ran out meanwhile): marked in Redis then. Redis failing too, they are sent again.
   */
  private async sentBefore(claimed: Claimed[]): Promise<string[]> {
    if (claimed.length === 0) return [];
    const marks = await this.redis
      .mget(...claimed.map((n) => notificationSentKey(n.mail_id)))
      .catch((): null[] => claimed.map(() => null));
    return claimed.filter((_, i) => marks[i] !== null).map((n) => n.id);
  }

  private async sendOne(n: Claimed): Promise<void> {
    if (n.email === null) {
      await this.pool.query(GIVE_UP_SQL, [n.id, NO_ADDRESS]);
      return;
    }
    // Read when sent: the timetable as it stands (PostgreSQL failing here fails the round; the
    // mail is due again when its lease ends).
    const text =
      n.kind === 'ENROLLED' ? n.body + (await this.timetable(n.student_id, n.lecture_id)) : n.body;
    try {
      await this.transport!.sendMail({
        from: this.from,
        to: n.email,
        subject: n.subject,
        // One id per notification: a mail sent twice all the same (a sender cut off between
        // the server's answer and both stores) is one message to the mailbox that dedupes.
        messageId: `<notification.${n.mail_id}@${this.domain}>`,
        text,
        signal: AbortSignal.any([this.abort.signal, AbortSignal.timeout(SEND_DEADLINE_MS)]),
      });
    } catch (err) {
      await this.failed(n, err as NodemailerError);
      return;
    }
    if (this.serverDown) this.logger.log('the mail server accepts mails again');
    this.serverDown = false;
    try {
      await this.pool.query(SENT_SQL, [[n.id]]);
    } catch (err) {
      // Accepted: never sent again by this instance (written with its next round), nor by
      // another that claims it once the lease has run out (the mark in Redis).
      this.unrecorded.add(n.id);
      await this.redis
        .set(notificationSentKey(n.mail_id), '1', 'EX', SENT_MARK_SECONDS)
        .catch(() => undefined);
      throw err;
    }
  }

  private async failed(n: Claimed, err: NodemailerError): Promise<void> {
    // The server refused this recipient or this message for good, or nodemailer itself found no
    // address it could send to: sending it again is no use.
    const forGood =
      (err.permanent === true && (err.command === 'RCPT TO' || err.command === 'DATA')) ||
      (err.code === 'EENVELOPE' && err.responseCode === undefined);
    const why = `${err.code ?? 'ERROR'}: ${err.message}`.slice(0, 500);
    if (forGood) {
      this.logger.warn(`notification ${n.id} given up: ${why}`);
      await this.pool.query(GIVE_UP_SQL, [n.id, why]);
      return;
    }
    if (!this.serverDown && !this.stopped) {
      this.logger.warn(`mail server: ${why}; notifications are retried until it accepts them`);
    }
    this.serverDown = true;
    await this.pool.query(RETRY_SQL, [n.id, why, BACKOFF_FIRST_MS, BACKOFF_MAX_MS]);
  }

  private async recordUnrecorded(): Promise<void> {
    if (this.unrecorded.size === 0) return;
    const ids = [...this.unrecorded];
    await this.pool.query(SENT_SQL, [ids]);
    for (const id of ids) this.unrecorded.delete(id);
  }

  /** The student's timetable in the lecture's term, as it stands now, after the mail's text. */
  private async timetable(studentId: string, lectureId: number): Promise<string> {
    const { rows } = await this.pool.query<TimetableRow>(TIMETABLE_SQL, [studentId, lectureId]);
    if (rows.length === 0) return '';
    const lines = rows.map((r) => {
      const meetings = r.meetings.map(meetingText).join(', ') || 'no meetings';
      const course = r.course_code ? `${r.course_code}, ` : '';
      const where = r.location ? `; ${r.location}` : '';
      return `- ${r.title} (lecture ${r.lecture_id}, ${course}${r.credits} credits): ${meetings}${where}`;
    });
    const credits = rows.reduce((sum, r) => sum + r.credits, 0);
    return `\n\nYour timetable in ${rows[0].term} (${credits} credits):\n${lines.join('\n')}\n`;
  }
}

interface TimetableRow {
  term: string;
  lecture_id: number;
  title: string;
  course_code: string | null;
  credits: number;
  meetings: Meeting[];
  location: string | null;
}

function meetingText(m: Meeting): string {
  const dates = m.from || m.until ? ` (${m.from ?? '…'} to ${m.until ?? '…'})` : '';
  return `${m.day} ${m.start}-${m.end}${dates}`;
}

/**
 * Due unsent mails not leased to another sender, oldest due first, leased to this one; each with
 * the student's address as it is now.
 */
const CLAIM_SQL = `
  WITH due AS (
    SELECT id FROM notification
     WHERE sent_at IS NULL AND next_attempt_at <= now()
       AND (claimed_until IS NULL OR claimed_until < now())
     ORDER BY next_attempt_at, id
     LIMIT $1
     FOR UPDATE SKIP LOCKED)
  UPDATE notification n SET claimed_until = now() + $2 * interval '1 millisecond'
    FROM due
   WHERE n.id = due.id
  RETURNING n.id::text AS id,
            n.id || '.' || (extract(epoch FROM n.created_at) * 1000000)::bigint AS mail_id,
            n.student_id, n.kind, n.lecture_id, n.subject, n.body,
            (SELECT c.email FROM student_contact c WHERE c.student_id = n.student_id) AS email`;

const SENT_SQL = `
  UPDATE notification SET sent_at = now(), claimed_until = NULL, last_error = NULL
   WHERE id = ANY ($1::bigint[]) AND sent_at IS NULL`;

/** Due again after 1 s, 2 s, 4 s, … (at most $4 ms), by the failures so far. */
const RETRY_SQL = `
  UPDATE notification
     SET attempts = attempts + 1, last_error = $2, claimed_until = NULL,
         next_attempt_at = now() + least($4::float8, $3::float8 * 2 ^ least(attempts, 20)) * interval '1 millisecond'
   WHERE id = $1 AND sent_at IS NULL`;

/** Not sent, never due again (see NO_ADDRESS). */
const GIVE_UP_SQL = `
  UPDATE notification SET next_attempt_at = 'infinity', last_error = $2, claimed_until = NULL
   WHERE id = $1 AND sent_at IS NULL`;

const TIMETABLE_SQL = `
  SELECT l.term, e.lecture_id, l.title, l.course_code, e.credits, l.meetings, l.location
    FROM enrollment e JOIN lecture l ON l.id = e.lecture_id
   WHERE e.student_id = $1 AND e.term = (SELECT term FROM lecture WHERE id = $2)
   ORDER BY e.enrolled_at, e.lecture_id`;
