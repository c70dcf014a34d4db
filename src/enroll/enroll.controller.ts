import { UseGuards, Controller, Delete, Get, HttpCode, Param, Post, Res } from '@nestjs/common';
import { ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import { ApiErrors } from '../docs/api-errors.decorator';
import type { FastifyReply } from 'fastify';
import { AuthUser, CurrentUser } from '../auth/current-user.decorator';
import { Roles } from '../auth/roles.decorator';
import { RateLimitGuard } from '../ratelimit/rate-limit.guard';
import { ParseIdPipe } from '../common/parse-id.pipe';
import { EnrollService, EnrollView, MyEnrollments } from './enroll.service';

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
    'RATE_LIMITED',
  )
  @ApiOperation({ summary: 'Enroll with an admission ticket' })
  @ApiResponse({ status: 201, type: EnrollView, description: 'status ENROLLED: the seat is yours' })
  @ApiResponse({
    status: 200,
    type: EnrollView,
    description: 'status ALREADY_ENROLLED: you already held a seat in this lecture',
  })
  @Post('lectures/:id/enroll')
  async enroll(
    @Param('id', ParseIdPipe) id: number,
    @CurrentUser() user: AuthUser,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<EnrollView> {
    const { created, view } = await this.enrollments.enroll(id, user.id);
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
