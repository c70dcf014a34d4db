import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import type { PostgresConnectionOptions } from 'typeorm/driver/postgres/PostgresConnectionOptions';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { dataSourceOptions } from './data-source';
import { ensureDatabase } from './ensure-database';
import { migrateWithLock } from './migrate';

@Module({
  imports: [
    TypeOrmModule.forRootAsync({
      inject: [APP_CONFIG],
      useFactory: (config: AppConfig) => ({
        ...dataSourceOptions(config.databaseUrl, config.dbPoolSize),
        migrationsRun: config.migrateOnStart,
        retryAttempts: 2,
        retryDelay: 1000,
      }),
      // Creates the database if missing, then runs `migrationsRun` ourselves, under an
      // advisory lock, instead of letting TypeORM race other instances starting at once.
      dataSourceFactory: async (options) => {
        const opts = options as PostgresConnectionOptions;
        await ensureDatabase(opts.url as string);
        const ds = await new DataSource({ ...opts, migrationsRun: false }).initialize();
        if (opts.migrationsRun) await migrateWithLock(ds);
        return ds;
      },
    }),
  ],
})
export class DatabaseModule {}
