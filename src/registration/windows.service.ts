import { createHash, randomBytes } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { AppError } from '../common/error-codes';
import { RegistrationCache } from './registration-cache';
import type { WindowDto, WindowView, WindowsView } from './registration.dto';
import { WINDOWS_LOCK, WINDOW_COLUMNS, windowOf } from './windows.sql';

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
    const answer = await this.db.transaction(async (tx) => {
      // Exclusive: every seat transaction of the term in flight (which holds it shared) commits
      // first, and the later ones are judged by the new windows.
      await tx.query('SELECT pg_advisory_xact_lock($1, hashtext($2))', [WINDOWS_LOCK, term]);
      const kept: { name: string; seed: Buffer }[] = await tx.query(
        'SELECT name, seed FROM term_window WHERE term = $1',
        [term],
      );
      const seeds = new Map(kept.map((w) => [w.name, w.seed]));
      // A window dropped keeps its seed in the archive: the draws it ran stay checkable.
      await tx.query(
        `INSERT INTO window_seed_archive (term, name, opens_at, seed, seed_commitment)
         SELECT term, name, opens_at, seed, seed_commitment FROM term_window
          WHERE term = $1 AND NOT name = ANY ($2::varchar[])
         ON CONFLICT DO NOTHING`,
        [term, windows.map((w) => w.name)],
      );
      await tx.query('DELETE FROM term_window WHERE term = $1', [term]);
      await tx.query('UPDATE registration_changes SET version = version + 1');
      if (windows.length === 0) return [];
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
      return (await tx.query(
        `INSERT INTO term_window (term, name, position, opens_at, closes_at, match_years,
                                  match_majors, match_groups, max_credits, seed, seed_commitment)
         SELECT $1, r.name, r.position, r.opens_at, r.closes_at, r.match_years, r.match_majors,
                r.match_groups, r.max_credits, decode(r.seed, 'hex'), r.seed_commitment
           FROM jsonb_to_recordset($2::jsonb) AS r (name varchar, position int, opens_at timestamptz,
                closes_at timestamptz, match_years int[], match_majors varchar[], match_groups varchar[],
                max_credits int, seed text, seed_commitment text)
         RETURNING ${WINDOW_COLUMNS}, position, seed, opens_at <= now() AS opened`,
        [term, JSON.stringify(rows)],
      )) as Record<string, unknown>[];
    });
    // This instance reads the windows again at once (its next join sees them); the others
    // within a poll of registration_changes (RegistrationCache).
    await this.cache.reload().catch(() => undefined);
    const sorted = answer.sort((a, b) => Number(a.position) - Number(b.position));
    return { term, windows: sorted.map(view) };
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

  /**
   * The commitment of the seed a window of the term has now, or had when it was dropped last
   * (a draw's record names it: the seed is published once that window opened).
   */
  async commitmentOf(term: string, name: string): Promise<string | null> {
    const [row] = await this.db.query(
      `SELECT seed_commitment FROM (
         SELECT seed_commitment, 1 AS o, now() AS at FROM term_window WHERE term = $1 AND name = $2
         UNION ALL
         SELECT seed_commitment, 2, dropped_at FROM window_seed_archive WHERE term = $1 AND name = $2
       ) s ORDER BY o, at DESC LIMIT 1`,
      [term, name],
    );
    return row ? String(row.seed_commitment).trim() : null;
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
