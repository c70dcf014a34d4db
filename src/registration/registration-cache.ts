import { Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import type { RegistrationWindow, StudentHold } from './registration.types';
import { WINDOW_COLUMNS, windowOf } from './windows.sql';

/** How often an instance looks whether holds or windows changed (a change applies within 1 s). */
const POLL_MS = 250;

/**
 * This instance's copy of every hold and every term's windows, so that a join judges them without
 * a PostgreSQL read (API.md v4: they apply to joins within 1 s of a change, on every instance).
 * Both are small — a few thousand holds, at most 50 windows a term — so each change reloads them
 * whole: nothing can be missed between two versions. Every change bumps one row,
 * registration_changes, in its own transaction; each instance reads that row every POLL_MS (one
 * indexed row, off every request's path) and its copy again when it moved. A read that fails
 * keeps the copy in use; the next poll tries again. The seat transaction never reads these: it
 * judges holds and windows from PostgreSQL itself.
 */
@Injectable()
export class RegistrationCache implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(RegistrationCache.name);
  private holds = new Map<string, StudentHold[]>();
  private windows = new Map<string, RegistrationWindow[]>();
  private loaded: Promise<void> | null = null;
  /** the changes' version the copy was read at (null: not read yet) */
  private version: string | null = null;
  /** reads started, and the newest one that has landed: an older read never replaces a newer */
  private started = 0;
  private landed = 0;
  private timer?: NodeJS.Timeout;
  private polling = false;

  constructor(@InjectDataSource() private readonly db: DataSource) {}

  onApplicationBootstrap(): void {
    this.timer = setInterval(() => void this.poll(), POLL_MS);
    this.timer.unref();
    void this.ready().catch(() => undefined); // read ahead of the first join; retried on use
  }

  onApplicationShutdown(): void {
    clearInterval(this.timer);
  }

  /**
   * The registration changes' version this instance's copy was read at (null: not read yet):
   * it moves with every hold, window, record and term limit change (src/auto-enroll/mirror.sql.ts).
   */
  get changesVersion(): string | null {
    return this.version;
  }

  /** The student's holds (every term's), as of this instance's copy. */
  async holdsOf(studentId: string): Promise<StudentHold[]> {
    await this.ready();
    return this.holds.get(studentId) ?? [];
  }

  /** The term's windows in their order (none: the term has no window rule). */
  async windowsOf(term: string): Promise<RegistrationWindow[]> {
    await this.ready();
    return this.windows.get(term) ?? [];
  }

  /** Reads both again now (after this instance's own change: its next request sees it). */
  async reload(): Promise<void> {
    await this.read();
    this.loaded = Promise.resolve();
  }

  /** The copies, read once (again after a failed first read). */
  private ready(): Promise<void> {
    if (!this.loaded) {
      this.loaded = this.read().catch((err: unknown) => {
        this.loaded = null;
        throw err;
      });
    }
    return this.loaded;
  }

  /** Holds, windows and the changes' version, from one snapshot. */
  private async read(): Promise<void> {
    const mine = ++this.started;
    const [row] = (await this.db.query(
      `SELECT (SELECT version FROM registration_changes)::text AS version,
              (SELECT coalesce(json_agg(json_build_object('studentId', student_id, 'code', code, 'message', message)
                                        ORDER BY student_id, code), '[]') FROM student_hold) AS holds,
              (SELECT coalesce(json_agg(row_to_json(w) ORDER BY w.term, w.position), '[]')
                 FROM (SELECT term, position, ${WINDOW_COLUMNS} FROM term_window) w) AS windows`,
    )) as { version: string; holds: HoldRow[]; windows: Record<string, unknown>[] }[];
    if (mine < this.landed) return; // a newer read landed meanwhile
    const holds = new Map<string, StudentHold[]>();
    for (const h of row.holds) {
      const list = holds.get(h.studentId) ?? [];
      list.push({ code: h.code, message: h.message });
      holds.set(h.studentId, list);
    }
    const windows = new Map<string, RegistrationWindow[]>();
    for (const w of row.windows) {
      const term = w.term as string;
      const list = windows.get(term) ?? [];
      list.push(windowOf({ ...w, opens_at: new Date(w.opens_at as string), closes_at: w.closes_at ? new Date(w.closes_at as string) : null })); // prettier-ignore
      windows.set(term, list);
    }
    this.holds = holds;
    this.windows = windows;
    this.version = row.version;
    this.landed = mine;
  }

  /** Reads the copies again when the changes' version moved. */
  private async poll(): Promise<void> {
    if (this.polling) return;
    this.polling = true;
    try {
      const [{ version }] = (await this.db.query(
        'SELECT version::text AS version FROM registration_changes',
      )) as { version: string }[];
      if (version !== this.version) await this.reload();
    } catch (err) {
      this.logger.warn(`holds and windows not read again yet: ${(err as Error).message}`);
    } finally {
      this.polling = false;
    }
  }
}

interface HoldRow {
  studentId: string;
  code: string;
  message: string;
}
