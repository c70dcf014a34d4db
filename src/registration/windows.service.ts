import { createHash, randomBytes } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { AppError } from '../common/error-codes';
import { RegistrationCache } from './registration-cache';
import type { WindowDto, WindowView, WindowsView } from './registration.dto';
import { RegistrationStore } from './registration.store';
import { WINDOW_COLUMNS, windowOf } from './windows.sql';

/** Advisory lock namespace of window replacements ('wndw'); the term's hash is the other half. */
const WINDOWS_LOCK = 0x776e6477;

/**
 * A term's registration windows (API.md v4): replaced whole, in the order they are judged. Each
 * window gets a secret 32-byte seed when first stored — its SHA-256 published at once, the seed
 * itself once the window opens — and keeps it while its name stays, so a window's draw cannot
 * be computed before it opens, nor changed by replacing the windows.
 */
@Injectable()
export class WindowsService {
  constructor(
    @InjectDataSource() private readonly db: DataSource,
    private readonly store: RegistrationStore,
    private readonly cache: RegistrationCache,
  ) {}

  async get(term: string): Promise<WindowsView> {
    const rows: Record<string, unknown>[] = await this.db.query(
      `SELECT ${WINDOW_COLUMNS}, seed, opens_at <= now() AS opened
         FROM term_window WHERE term = $1 ORDER BY position`,
      [term],
    );
    return { term, windows: rows.map(view) };
  }

  async replace(term: string, windows: WindowDto[]): Promise<WindowsView> {
    const names = windows.map((w) => w.name);
    const twice = names.find((n, i) => names.indexOf(n) !== i);
    if (twice !== undefined) {
      throw new AppError('VALIDATION_FAILED', `windows: the name "${twice}" is given twice`);
    }
    windows.forEach((w, i) => {
      if (w.closesAt && w.closesAt.getTime() <= w.opensAt.getTime()) {
        throw new AppError('VALIDATION_FAILED', `windows.${i}.closesAt must be after opensAt`);
      }
    });
    await this.db.transaction(async (tx) => {
      await tx.query('SELECT pg_advisory_xact_lock($1, hashtext($2))', [WINDOWS_LOCK, term]);
      const kept: { name: string; seed: Buffer }[] = await tx.query(
        'SELECT name, seed FROM term_window WHERE term = $1',
        [term],
      );
      const seeds = new Map(kept.map((w) => [w.name, w.seed]));
      await tx.query('DELETE FROM term_window WHERE term = $1', [term]);
      if (windows.length === 0) return;
      const rows = windows.map((w, position) => {
        const seed = seeds.get(w.name) ?? randomBytes(32);
        return {
          name: w.name,
          position,
          opens_at: w.opensAt.toISOString(),
          closes_at: w.closesAt ? w.closesAt.toISOString() : null,
          match_years: w.match?.years ?? null,
          match_majors: w.match?.majors ?? null,
          match_groups: w.match?.groups ?? null,
          max_credits: w.maxCredits ?? null,
          seed: seed.toString('hex'),
          seed_commitment: createHash('sha256').update(seed).digest('hex'),
        };
      });
      await tx.query(
        `INSERT INTO term_window (term, name, position, opens_at, closes_at, match_years,
                                  match_majors, match_groups, max_credits, seed, seed_commitment)
         SELECT $1, r.name, r.position, r.opens_at, r.closes_at, r.match_years, r.match_majors,
                r.match_groups, r.max_credits, decode(r.seed, 'hex'), r.seed_commitment
           FROM jsonb_to_recordset($2::jsonb) AS r (name varchar, position int, opens_at timestamptz,
                closes_at timestamptz, match_years int[], match_majors varchar[], match_groups varchar[],
                max_credits int, seed text, seed_commitment text)`,
        [term, JSON.stringify(rows)],
      );
    });
    // Every instance reads the windows again (this one at once: its next join sees them).
    await this.store.changed().catch(() => undefined); // the instances' periodic read catches up
    await this.cache.reload().catch(() => undefined);
    return this.get(term);
  }

  /**
   * A window's secret seed, for the HMACs of its pre-queue, by its commitment (a window made
   * again under a dropped one's name has a new seed); null: no such window now.
   */
  async seed(term: string, name: string, commitment: string): Promise<Buffer | null> {
    const [row] = await this.db.query(
      'SELECT seed FROM term_window WHERE term = $1 AND name = $2 AND seed_commitment = $3',
      [term, name, commitment],
    );
    return row?.seed ?? null;
  }
}

function view(r: Record<string, unknown>): WindowView {
  const w = windowOf(r);
  return {
    name: w.name,
    opensAt: new Date(w.opensAt).toISOString(),
    closesAt: w.closesAt === null ? null : new Date(w.closesAt).toISOString(),
    match: w.match,
    maxCredits: w.maxCredits,
    seedCommitment: w.seedCommitment,
    seed: r.opened ? (r.seed as Buffer).toString('hex') : null,
  };
}
