import { JoinAllBodyDto, autoOf } from '../queue/join.dto';
import { Body, Controller, Get, HttpCode, Param, Post, Put, UseGuards } from '@nestjs/common';
import { ApiBody, ApiOperation, ApiTags } from '@nestjs/swagger';
import { AuthUser, CurrentUser } from '../auth/current-user.decorator';
import { Roles } from '../auth/roles.decorator';
import { ApiErrors } from '../docs/api-errors.decorator';
import { RateLimitGuard } from '../ratelimit/rate-limit.guard';
import { ParseTermPipe } from '../terms/term-params';
import { PlanDto, PlanQueueView, PlanView } from './plans.dto';
import { PlansService } from './plans.service';

@ApiTags('plan')
@Controller('me/terms/:term/plan')
@Roles('student')
@UseGuards(RateLimitGuard)
export class PlansController {
  constructor(private readonly plans: PlansService) {}

  @ApiErrors('FORBIDDEN', 'RATE_LIMITED')
  @ApiOperation({ summary: 'My plan for a term (empty if never set)' })
  @Get()
  get(
    @Param('term', ParseTermPipe) term: string,
    @CurrentUser() user: AuthUser,
  ): Promise<PlanView> {
    return this.plans.get(user.id, term);
  }

  @ApiErrors('FORBIDDEN', 'LECTURE_NOT_FOUND', 'RATE_LIMITED', 'PAYLOAD_TOO_LARGE')
  @ApiOperation({
    summary: 'Set my plan for a term: 0–20 distinct lectures of the term, in the order I want them',
    description:
      'Stored as given; conflicts, sections of one course and credits over the limit come back ' +
      'as warnings, never refusals (a plan may hold alternatives). A lecture of another term is ' +
      'VALIDATION_FAILED.',
  })
  @Put()
  put(
    @Param('term', ParseTermPipe) term: string,
    @CurrentUser() user: AuthUser,
    @Body() dto: PlanDto,
  ): Promise<PlanView> {
    return this.plans.put(user.id, term, dto.lectureIds);
  }

  @ApiErrors('FORBIDDEN', 'RATE_LIMITED')
  @ApiOperation({
    summary: 'Join (or pre-queue) every lecture of my plan, in plan order, in one request',
    description:
      'Each lecture is joined exactly as POST /lectures/{id}/queue would; one item per lecture ' +
      'in plan order: its QueueStatus, or `{ lectureId, error }` (FULL, CLOSED, NOT_OPEN, …). ' +
      'One request for the rate limit. With autoEnroll, every lecture of the plan enrolls the student ' +
      'when admitted (as a join with autoEnroll would).',
  })
  @ApiBody({ type: JoinAllBodyDto, required: false })
  @Post('queue')
  @HttpCode(200)
  async joinAll(
    @Param('term', ParseTermPipe) term: string,
    @CurrentUser() user: AuthUser,
    @Body() body?: JoinAllBodyDto,
  ): Promise<PlanQueueView> {
    return { items: await this.plans.joinAll(user.id, term, autoOf(body)) };
  }
}
