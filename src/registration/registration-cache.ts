import { Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { RegistrationStore } from './registration.store';
import type { RegistrationWindow, StudentHold } from './registration.types';
import { WINDOW_COLUMNS, windowOf } from './windows.sql';

/** How often an instance looks whether holds or windows changed (a change applies within 1 s). */
const POLL_MS = 250;
/** However quiet the counter, copies are read again this often (a change told while Redis was away). */
const RELOAD_MS = 30_000;

/**
 * This instance's copy of every hold and every term's windows, so that a join judges them without
 * a PostgreSQL read (API.md v4: they apply to joins within 1 s of a change, on every instance).
 * Both are small — a few thousand holds, at most 50 windows a term — so each change reloads them
 * whole: nothing can be missed between two versions. A change is told by the counter every
 * writer bumps after its commit (RegistrationStore.changed), looked at every POLL_MS; a counter
 * Redis lost reads as a change too. The seat transaction never reads these: it judges holds and
 * windows from PostgreSQL itself.
 */
@Injectable()
export class RegistrationCache implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(RegistrationCache.name);
  private holds = new Map<string, StudentHold[]>();
  private windows = new Map<string, RegistrationWindow[]>();
  private loaded: Promise<void> | null = null;
  private loadedAt = 0;
  /** the change counter as of the last read (undefined: it could not be read) */
  private seen: string | null | undefined = undefined;
  private timer?: NodeJS.Timeout;
  private polling = false;

  constructor(
    @InjectDataSource() private readonly db: DataSource,
    private readonly store: RegistrationStore,
  ) {}

  onApplicationBootstrap(): void {
    this.timer = setInterval(() => void this.poll(), POLL_MS);
    this.timer.unref();
    void this.ready().catch(() => undefined); // read ahead of the first join; retried on use
  }

  onApplicationShutdown(): void {
    clearInterval(this.timer);
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

  /**
   * Reads both again now (after this instance's own change: its next request sees it). A read
   * that fails keeps the copy there is in use; the next poll tries again.
   */
  async reload(): Promise<void> {
    await this.read();
    this.loaded = Promise.resolve();
  }

  /** The copies, read once (again after a failed read). */
  private ready(): Promise<void> {
    if (!this.loaded) {
      this.loaded = this.read().catch((err: unknown) => {
        this.loaded = null;
        throw err;
      });
    }
    return this.loaded;
  }

  private async read(): Promise<void> {
    // The counter as of before this read: a change committed after it moves it again.
    const version = await this.store.version().catch(() => undefined);
    const [holdRows, windowRows] = await Promise.all([
      this.db.query('SELECT student_id, code, message FROM student_hold ORDER BY student_id, code'),
      this.db.query(`SELECT term, ${WINDOW_COLUMNS} FROM term_window ORDER BY term, position`),
    ]);
    const holds = new Map<string, StudentHold[]>();
    for (const r of holdRows as { student_id: string; code: string; message: string }[]) {
      const list = holds.get(r.student_id) ?? [];
      list.push({ code: r.code, message: r.message });
      holds.set(r.student_id, list);
    }
    const windows = new Map<string, RegistrationWindow[]>();
    for (const r of windowRows as ({ term: string } & Record<string, unknown>)[]) {
      const list = windows.get(r.term) ?? [];
      list.push(windowOf(r));
      windows.set(r.term, list);
    }
    this.holds = holds;
    this.windows = windows;
    this.loadedAt = Date.now();
    this.seen = version;
  }

  /** Reads the copies again when the counter moved, or RELOAD_MS after the last read. */
  private async poll(): Promise<void> {
    if (this.polling) return;
    this.polling = true;
    try {
      const version = await this.store.version();
      if (version !== this.seen || Date.now() - this.loadedAt > RELOAD_MS) await this.reload();
    } catch (err) {
      this.logger.warn(`holds and windows not read again yet: ${(err as Error).message}`);
    } finally {
      this.polling = false;
    }
  }
}
