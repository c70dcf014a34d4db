import { DynamicModule, Module } from '@nestjs/common';
import { AuthModule } from './auth/auth.module';
import { CatalogModule } from './catalog/catalog.module';
import { AppConfig } from './config/app-config';
import { ConfigModule } from './config/config.module';
import { DatabaseModule } from './database/database.module';
import { EnrollModule } from './enroll/enroll.module';
import { AutoEnrollModule } from './auto-enroll/auto-enroll.module';
import { FairnessModule } from './fairness/fairness.module';
import { HealthModule } from './health/health.module';
import { MemoryModule } from './memory/memory.module';
import { MetricsModule } from './metrics/metrics.module';
import { NotificationsModule } from './notifications/notifications.module';
import { LecturesModule } from './lectures/lectures.module';
import { LiveModule } from './live/live.module';
import { QueueModule } from './queue/queue.module';
import { RedisModule } from './redis/redis.module';
import { TermsModule } from './terms/terms.module';
import { PlansModule } from './plans/plans.module';
import { RegistrationModule } from './registration/registration.module';

@Module({})
export class AppModule {
  /** The config is passed in, not read from process.env here, so tests can run several apps. */
  static forRoot(config: AppConfig): DynamicModule {
    return {
      module: AppModule,
      imports: [
        ConfigModule.forRoot(config),
        MetricsModule,
        DatabaseModule,
        RedisModule.forRoot(config),
        NotificationsModule,
        AuthModule,
        HealthModule,
        LecturesModule,
        FairnessModule,
        QueueModule,
        TermsModule,
        RegistrationModule,
        CatalogModule,
        PlansModule,
        EnrollModule,
        AutoEnrollModule,
        LiveModule,
        MemoryModule,
      ],
    };
  }
}
