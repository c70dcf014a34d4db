import { DataSource, DataSourceOptions } from 'typeorm';
import { MIGRATIONS } from '../../migrations';
import { Enrollment } from '../enroll/enrollment.entity';
import { DEFAULT_DATABASE_URL } from '../config/load-config';
import { Lecture } from '../lectures/lecture.entity';

export const ENTITIES = [Lecture, Enrollment];

/** One set of options for the app, the migration CLI and the tests. Never `synchronize`. */
export function dataSourceOptions(url: string, poolSize = 10): DataSourceOptions {
  return {
    type: 'postgres',
    url,
    entities: ENTITIES,
    migrations: MIGRATIONS,
    migrationsTransactionMode: 'all',
    synchronize: false,
    extra: {
      max: poolSize,
      // Fail fast when PostgreSQL is unreachable, so clients get 503 instead of a hang.
      connectionTimeoutMillis: 3000,
    },
  };
}

/** The migration CLI's data source: `typeorm -d dist/src/database/data-source.js migration:run`. */
export default new DataSource(
  dataSourceOptions(process.env.DATABASE_URL || DEFAULT_DATABASE_URL, 2),
);
