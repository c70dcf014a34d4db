import { Controller, Delete, Get, HttpCode, Param, Post, Res } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { AuthUser, CurrentUser } from '../auth/current-user.decorator';
import { Roles } from '../auth/roles.decorator';
import { ParseIdPipe } from '../common/parse-id.pipe';
import { EnrollService, EnrollView } from './enroll.service';

@Controller()
@Roles('student')
export class EnrollController {
  constructor(private readonly enrollments: EnrollService) {}

  /** 201 ENROLLED; 200 ALREADY_ENROLLED when the student already holds a seat. */
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

  @Delete('lectures/:id/enroll')
  @HttpCode(204)
  async cancel(@Param('id', ParseIdPipe) id: number, @CurrentUser() user: AuthUser): Promise<void> {
    await this.enrollments.cancel(id, user.id);
  }

  @Get('me/enrollments')
  mine(@CurrentUser() user: AuthUser) {
    return this.enrollments.enrollmentsOf(user.id);
  }
}
