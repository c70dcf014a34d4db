import { IsInt, Max, Min } from 'class-validator';
import { IsOmittable } from '../../common/validators';

export class AdmissionSettingsDto {
  /** Students admitted per tick (1–10000). */
  @IsOmittable() @IsInt() @Min(1) @Max(10_000) batchSize?: number;
  /** Lifetime of an admission ticket in seconds (10–3600). */
  @IsOmittable() @IsInt() @Min(10) @Max(3600) ticketTtlSeconds?: number;
  /** Cap on unconsumed tickets at once (1–100000). */
  @IsOmittable() @IsInt() @Min(1) @Max(100_000) maxActiveTickets?: number;
  /** Minutes before opensAt from which students may join the pre-queue (0–1440; 0: none). */
  @IsOmittable() @IsInt() @Min(0) @Max(1440) preQueueMinutes?: number;
  /**
   * Students who may still join and wait once no seat is left (0–10000; 0: a join is refused
   * FULL); everyone waiting counts.
   */
  @IsOmittable() @IsInt() @Min(0) @Max(10_000) waitlist?: number;
}
