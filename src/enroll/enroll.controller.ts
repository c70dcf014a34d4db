import {
  Body,
  Controller,
  Delete,
  Get,
  HttpCode,
  Param,
  Post,
  Put,
  Res,
  UseGuards,
} from '@nestjs/common';
import { IsInt, Max, Min } from 'class-validator';
import { IsLectureIds, IsOmittable } from '../common/validators';
import { ApiBody, ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import { GATES, GATE_CODES, RULES, RULE_CODES } from '../rules';
import { ApiErrors } from '../docs/api-errors.decorator';
import type { FastifyReply } from 'fastify';
import { AuthUser, CurrentUser } from '../auth/current-user.decorator';
import { Roles } from '../auth/roles.decorator';
import { RateLimitGuard } from '../ratelimit/rate-limit.guard';
import { ParseIdPipe } from '../common/parse-id.pipe';
import { EnrollService, EnrollView, MyEnrollments, SectionsView } from './enroll.service';

export class EnrollBodyDto {
  /**
   * Swap: give up your seat in this lecture (of the same term) and take one here, in one
   * transaction, both or neither; the term's rules are checked as if it were already dropped.
   */
  @IsOmittable() @IsInt() @Min(1) @Max(2_147_483_647) swapFrom?: number;
  /**
   * A lecture with secondary sections: one of each component among them (ids), taken with it
   * in one transaction; a lecture without any takes none.
   */
  @IsOmittable() @IsLectureIds(50) sections?: number[];
}

export class SectionsBodyDto {
  /** secondary sections of the lecture, at most one per component, to hold instead of the ones held */
  @IsLectureIds(50) sections: number[];
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
    'SECONDARY_SECTION',
    'COMPONENT_REQUIRED',
    'NO_TICKET',
    'NOT_OPEN',
    'FULL',
    'CLOSED',
    ...GATE_CODES,
    ...RULE_CODES,
    'NOT_ENROLLED',
    'RATE_LIMITED',
  )
  @ApiOperation({
    summary: 'Enroll with an admission ticket (or swap a held lecture for this one)',
    description:
      'A lecture that secondary sections name is taken as a package: sections names one of ' +
      'each component (else COMPONENT_REQUIRED with the choices, before the ticket is touched), ' +
      'all seats taken in one transaction, the rules judged on the whole package; a chosen ' +
      'section without a seat is FULL with its lectureId, the ticket kept while another of its ' +
      'component has one. A secondary section itself answers SECONDARY_SECTION. ' +
      `After the ticket and the lecture's window, who may register at all is judged in the seat transaction: ${GATES.map((r) => r.describe).join(', ')}. ` + // prettier-ignore
      'Then, only while a seat is free (FULL first), the ' +
      `term's rules refuse in this order: ${RULES.map((r) => r.describe).join(', ')}; those that ` +
      'name held lectures in the way add conflictsWith. On those refusals, as on HOLD and the window codes, the ticket is kept with its remaining lifetime. With swapFrom, the seat ' +
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
    const { created, view } = await this.enrollments.enroll(id, user.id, body);
    reply.status(created ? 201 : 200);
    return view;
  }

  @ApiErrors('FORBIDDEN', 'LECTURE_NOT_FOUND', 'SECONDARY_SECTION', 'NOT_ENROLLED', 'RATE_LIMITED')
  @ApiOperation({
    summary: 'Give the seat back',
    description: "A lecture's secondary sections held with it are given up with it.",
  })
  @Delete('lectures/:id/enroll')
  @HttpCode(204)
  async cancel(@Param('id', ParseIdPipe) id: number, @CurrentUser() user: AuthUser): Promise<void> {
    await this.enrollments.cancel(id, user.id);
  }

  @ApiErrors(
    'FORBIDDEN',
    'VALIDATION_FAILED',
    'LECTURE_NOT_FOUND',
    'SECONDARY_SECTION',
    'COMPONENT_REQUIRED',
    'NOT_ENROLLED',
    'FULL',
    'CLOSED',
    ...GATE_CODES,
    ...RULE_CODES,
    'RATE_LIMITED',
  )
  @ApiOperation({
    summary: 'Exchange secondary sections of a held lecture',
    description:
      'The held sections of the named components are exchanged for the named ones in one ' +
      'transaction (the old seat given up only if the new one is taken), under the same rules ' +
      'as an enroll; no ticket is needed. FULL names the section without a seat (lectureId).',
  })
  @Put('me/enrollments/:id/sections')
  exchange(
    @Param('id', ParseIdPipe) id: number,
    @Body() body: SectionsBodyDto,
    @CurrentUser() user: AuthUser,
  ): Promise<SectionsView> {
    return this.enrollments.exchange(id, user.id, body.sections);
  }

  @ApiErrors('FORBIDDEN', 'RATE_LIMITED')
  @ApiOperation({ summary: 'List my enrollments' })
  @Get('me/enrollments')
  mine(@CurrentUser() user: AuthUser): Promise<MyEnrollments> {
    return this.enrollments.enrollmentsOf(user.id);
  }
}
