import { ApiProperty } from '@nestjs/swagger';
import { RULE_CODES, RuleCode } from '../rules';
import { ArrayMaxSize, ArrayUnique, IsArray, IsInt, IsPositive } from 'class-validator';
import { ErrorBody } from '../common/error-codes';
import { QueueStatusView } from '../queue/queue-status.view';

export const MAX_PLAN = 20;

export class PlanDto {
  /** 0–20 distinct lectures of the term, in the order you want them */
  @IsArray()
  @ArrayMaxSize(MAX_PLAN)
  @ArrayUnique()
  @IsInt({ each: true })
  @IsPositive({ each: true })
  lectureIds: number[];
}

export class PlanWarning {
  /** the rule enroll would refuse with: SAME_COURSE, TIME_CONFLICT, CREDIT_LIMIT */
  @ApiProperty({ enum: RULE_CODES })
  code: RuleCode;
  /** the planned lectures it concerns; for CREDIT_LIMIT, those past the limit in plan order */
  lectureIds: number[];
}

export class PlanView {
  term: string;
  lectureIds: number[];
  /** the planned lectures' credits together */
  credits: number;
  /** the limit in force for you in the term */
  maxCredits: number;
  /** what enrolling in all of them would run into; a plan may hold alternatives */
  warnings: PlanWarning[];
}

/** One planned lecture joined: its status, or why it could not be joined. */
export class PlanQueueItem {
  lectureId: number;
  status?: QueueStatusView['status'];
  position?: number | null;
  waiting?: number;
  estimatedWaitSeconds?: number | null;
  ticketExpiresAt?: string | null;
  seatsLeft?: number;
  autoEnroll?: boolean;
  lastRefusal?: QueueStatusView['lastRefusal'];
  /** FULL, CLOSED, NOT_OPEN, … as POST /lectures/{id}/queue would have answered */
  error?: Omit<ErrorBody, 'conflictsWith'>;
}

export class PlanQueueView {
  /** one per planned lecture, in plan order */
  items: PlanQueueItem[];
}
