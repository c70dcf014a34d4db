import { Transform } from 'class-transformer';
import {
  IsBoolean,
  IsIn,
  IsInt,
  IsOptional,
  IsString,
  Matches,
  Max,
  Min,
  MinLength,
} from 'class-validator';
import { ADMISSION_MODES } from './app-config';

// Environment values are strings: turn digit strings into numbers and 'true'/'false' into
// booleans, and leave anything else as it is so that the validators below reject it by name.
const toInt = () =>
  Transform(({ value }: { value: unknown }) =>
    typeof value === 'string' && /^\d+$/.test(value.trim()) ? Number(value.trim()) : value,
  );
const toBool = () =>
  Transform(({ value }: { value: unknown }) =>
    value === 'true' ? true : value === 'false' ? false : value,
  );

/** The environment table of API.md, with each variable's range. */
export class EnvSchema {
  @IsOptional() @toInt() @IsInt() @Min(0) @Max(65535) PORT?: number;
  @IsOptional() @IsString() @MinLength(1) HOST?: string;

  @IsOptional()
  @Matches(/^postgres(ql)?:\/\/.+/, { message: 'DATABASE_URL must be a postgres:// URL' })
  DATABASE_URL?: string;
  @IsOptional()
  @toBool()
  @IsBoolean({ message: 'DB_MIGRATE_ON_START must be true or false' })
  DB_MIGRATE_ON_START?: boolean;
  @IsOptional() @toInt() @IsInt() @Min(1) @Max(200) DB_POOL_SIZE?: number;

  @IsOptional()
  @Matches(/^rediss?:\/\/.+/, { message: 'REDIS_URL must be a redis:// URL' })
  REDIS_URL?: string;
  @IsOptional() @IsString() REDIS_KEY_PREFIX?: string;
  @IsOptional() @IsString() REDIS_CLUSTER_NODES?: string;

  @IsOptional()
  @IsString()
  @MinLength(16, { message: 'JWT_SECRET must be at least 16 characters' })
  JWT_SECRET?: string;
  @IsOptional()
  @Matches(/-----BEGIN [A-Z ]*PUBLIC KEY-----/, {
    message: 'JWT_PUBLIC_KEY must be a PEM public key',
  })
  JWT_PUBLIC_KEY?: string;

  @IsOptional() @IsIn(ADMISSION_MODES) ADMISSION_MODE?: string;
  @IsOptional() @toInt() @IsInt() @Min(10) @Max(3_600_000) ADMISSION_INTERVAL_MS?: number;
  @IsOptional() @toInt() @IsInt() @Min(1) @Max(10_000) ADMISSION_BATCH_SIZE?: number;
  @IsOptional() @toInt() @IsInt() @Min(10) @Max(3600) TICKET_TTL_SECONDS?: number;
  @IsOptional() @toInt() @IsInt() @Min(1) @Max(100_000) MAX_ACTIVE_TICKETS?: number;
  @IsOptional() @toInt() @IsInt() @Min(0) @Max(1440) PRE_QUEUE_MINUTES?: number;
  @IsOptional() @toInt() @IsInt() @Min(0) @Max(10_000) WAITLIST_SIZE?: number;
  @IsOptional() @toInt() @IsInt() @Min(0) @Max(1_000_000) RATE_LIMIT_PER_SECOND?: number;
  @IsOptional() @toInt() @IsInt() @Min(10) @Max(600) ENROLL_HOLD_SECONDS?: number;
  @IsOptional() @toInt() @IsInt() @Min(0) @Max(1_000_000) MAX_STREAMS?: number;
  @IsOptional() @toInt() @IsInt() @Min(0) @Max(3600) MEMORY_RECLAIM_IDLE_SECONDS?: number;
  @IsOptional() @toInt() @IsInt() @Min(0) @Max(100_000) AUTO_ENROLL_IN_FLIGHT?: number;
  @IsOptional()
  @toBool()
  @IsBoolean({ message: 'AUTO_ENROLL_CLEARANCE must be true or false' })
  AUTO_ENROLL_CLEARANCE?: boolean;
  @IsOptional()
  @Matches(/^[A-Za-z0-9_.-]{1,32}$/, {
    message: "DEFAULT_TERM must be 1 to 32 characters of A-Z, a-z, 0-9, '_', '.' and '-'",
  })
  DEFAULT_TERM?: string;
  @IsOptional() @toInt() @IsInt() @Min(0) @Max(60) MAX_CREDITS?: number;
  @IsOptional() @toInt() @IsInt() @Min(1) @Max(1024) BULK_BODY_LIMIT_MB?: number;

  @IsOptional() @IsString() CORS_ORIGINS?: string;

  @IsOptional()
  @Matches(/^smtps?:\/\/[^\s/?#]+\/?(\?\S*)?$/, {
    message: 'SMTP_URL must be an smtp:// or smtps:// URL (smtp://host:port)',
  })
  SMTP_URL?: string;
  @IsOptional()
  @Matches(/^[^\s@<>,;"]{1,64}@[^\s@<>,;"]{1,189}$/, {
    message: 'MAIL_FROM must be an e-mail address (registration@example.edu)',
  })
  MAIL_FROM?: string;

  @IsOptional()
  @IsIn(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'])
  LOG_LEVEL?: string;
  @IsOptional()
  @IsIn(['all', 'errors', 'off'], { message: 'ACCESS_LOG must be all, errors or off' })
  ACCESS_LOG?: 'all' | 'errors' | 'off';
  @IsOptional()
  @toBool()
  @IsBoolean({ message: 'LOG_PRETTY must be true or false' })
  LOG_PRETTY?: boolean;
}
