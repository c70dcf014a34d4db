import {
  Body,
  Controller,
  Delete,
  Get,
  HttpCode,
  Param,
  Post,
  Res,
  UseGuards,
} from '@nestjs/common';
import { IsInt, Max, Min } from 'class-validator';
import { IsOmittable } from '../common/validators';
import { ApiBody, ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import { RULES, RULE_CODES } from '../rules';
import { ApiErrors } from '../docs/api-errors.decorator';
import type { FastifyReply } from 'fastify';
import { AuthUser, CurrentUser } from '../auth/current-user.decorator';
import { Roles } from '../auth/roles.decorator';
import { RateLimitGuard } from '../ratelimit/rate-limit.guard';
import { ParseIdPipe } from '../common/parse-id.pipe';
import { EnrollService, EnrollView, MyEnrollments } from './enroll.service';

export class EnrollBodyDto {
  /**
   * Swap: give up your seat in this lecture (of the same term) and take one here, in one
   * transaction, both or neither; the term's rules are checked as if it were already dropped.
   */
  @IsOmittable() @IsInt() @Min(1) @Max(2_147_483_647) swapFrom?: number;
}

@ApiTags('enrollment')
@UseGuards(RateLimitGuard)
@Controller()
@Roles('student')
export class EnrollController {
  constructor(private readonly enrollments: EnrollService) {}

  /** 201 ENROLLED; 200 ALREADY_ENROLLED when the student already holds a seat. */
  @ApiErrors(
    'FORBIDDEN',
    'LECTURE_NOT_FOUND',
    'NO_TICKET',
    'NOT_OPEN',
    'FULL',
    'CLOSED',
    ...RULE_CODES,
    'NOT_ENROLLED',
    'RATE_LIMITED',
  )
  @ApiOperation({
    summary: 'Enroll with an admission ticket (or swap a held lecture for this one)',
    description:
      'After the ticket and window checks, and only while a seat is free (FULL first), the ' +
      `term's rules refuse in this order: ${RULES.map((r) => r.describe).join(', ')}; those that ` +
      'name held lectures in the way add conflictsWith. On those refusals the ticket is kept with its remaining lifetime. With swapFrom, the seat ' +
      'there is given up in the same transaction: both or neither, and its seat goes to the next ' +
      'student of its queue. NOT_ENROLLED: no seat in swapFrom; VALIDATION_FAILED: swapFrom is this ' +
      'lecture or in another term.',
  })
  // A plain enroll sends no body: the description must not make clients send one (API.md v4).
  @ApiBody({ type: EnrollBodyDto, required: false })
  @ApiResponse({ status: 201, type: EnrollView, description: 'status ENROLLED: the seat is yours' })
  @ApiResponse({
    status: 200,
    type: EnrollView,
    description: 'status ALREADY_ENROLLED: you already held a seat in this lecture',
  })
  @Post('lectures/:id/enroll')
  async enroll(
    @Param('id', ParseIdPipe) id: number,
    @Body() body: EnrollBodyDto,
    @CurrentUser() user: AuthUser,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<EnrollView> {
    const { created, view } = await this.enrollments.enroll(id, user.id, body.swapFrom);
    reply.status(created ? 201 : 200);
    return view;
  }

  @ApiErrors('FORBIDDEN', 'LECTURE_NOT_FOUND', 'NOT_ENROLLED', 'RATE_LIMITED')
  @ApiOperation({ summary: 'Give the seat back' })
  @Delete('lectures/:id/enroll')
  @HttpCode(204)
  async cancel(@Param('id', ParseIdPipe) id: number, @CurrentUser() user: AuthUser): Promise<void> {
    await this.enrollments.cancel(id, user.id);
  }

  @ApiErrors('FORBIDDEN', 'RATE_LIMITED')
  @ApiOperation({ summary: 'List my enrollments' })
  @Get('me/enrollments')
  mine(@CurrentUser() user: AuthUser): Promise<MyEnrollments> {
    return this.enrollments.enrollmentsOf(user.id);
  }
}
