import { Injectable } from '@nestjs/common';
import type { RedisClient } from '../redis/redis-client';
import { termRecordsKey } from '../redis/keys';
import { InjectRedis } from '../redis/redis.token';
import type { StudentRecord } from './registration.types';

/** A student's record with the version PostgreSQL gave its last change. */
export interface VersionedRecord {
  studentId: string;
  version: number;
  /** null: no record (the defaults) */
  record: Pick<StudentRecord, 'year' | 'majors' | 'groups'> | null;
}

/** Students written per script call: a 200,000-record import goes in chunks. */
const CHUNK = 1000;

/**
 * What joins read of registration in Redis (API.md v4): each term's student records, so that a
 * join judges the student's windows without a PostgreSQL read. PostgreSQL is the truth; this is
 * a copy, rebuilt from it when Redis lost it.
 */
@Injectable()
export class RegistrationStore {
  constructor(@InjectRedis() private readonly redis: RedisClient) {}

  /**
   * The student's record in the term as Redis has it; `loaded` is false when Redis does not
   * hold the term's records whole (never loaded, or lost): read it from PostgreSQL first.
   */
  async recordOf(
    term: string,
    studentId: string,
  ): Promise<{ loaded: boolean; record: VersionedRecord['record'] }> {
    const [value, loaded] = await this.redis.hmget(termRecordsKey(term), studentId, '~');
    return { loaded: loaded !== null, record: value ? decode(value) : null };
  }

  /** Writes records (each only where newer); `complete`: these are the whole term's. */
  async putRecords(term: string, records: VersionedRecord[], complete = false): Promise<void> {
    const key = termRecordsKey(term);
    for (let i = 0; i < records.length || (i === 0 && complete); i += CHUNK) {
      const chunk = records.slice(i, i + CHUNK);
      const last = i + CHUNK >= records.length;
      const pairs = chunk.flatMap((r) => [r.studentId, encode(r)]);
      await this.redis.putRecords(key, complete && last ? '1' : '0', ...pairs);
    }
  }

  /** The term's copy is no longer trusted whole: the next join rebuilds it. */
  async forget(term: string): Promise<void> {
    await this.redis.hdel(termRecordsKey(term), '~');
  }

  /**
   * The highest record version Redis's copy of the term holds (null: not loaded whole): behind
   * PostgreSQL's, the copy lost writes (a failover, a write refused) and is rebuilt.
   */
  async loadedVersion(term: string): Promise<number | null> {
    const v = await this.redis.hget(termRecordsKey(term), '~');
    return v === null ? null : Number(v);
  }
}

const list = (codes: string[]) => (codes.length > 0 ? codes.join(',') : '-');
const unlist = (cell: string) => (cell === '-' ? [] : cell.split(','));

function encode({ version, record }: VersionedRecord): string {
  if (!record) return `${version} - - -`;
  return `${version} ${record.year ?? '-'} ${list(record.majors)} ${list(record.groups)}`;
}

function decode(value: string): VersionedRecord['record'] {
  const [, year, majors, groups] = value.split(' ');
  if (year === '-' && majors === '-' && groups === '-') return null;
  return {
    year: year === '-' ? null : Number(year),
    majors: unlist(majors),
    groups: unlist(groups),
  };
}
