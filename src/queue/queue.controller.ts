import { Controller, Delete, Get, HttpCode, Param, Post, Res } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { AuthUser, CurrentUser } from '../auth/current-user.decorator';
import { Roles } from '../auth/roles.decorator';
import { ParseIdPipe } from '../common/parse-id.pipe';
import { QueueStatusView } from './queue-status.view';
import { QueueService, LectureStats } from './queue.service';

@Controller('lectures/:id')
export class QueueController {
  constructor(private readonly queue: QueueService) {}

  /** 201 on first join; 200 with the unchanged place when already waiting, admitted or enrolled. */
  @Post('queue')
  @Roles('student')
  async join(
    @Param('id', ParseIdPipe) id: number,
    @CurrentUser() user: AuthUser,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<QueueStatusView> {
    const { created, status } = await this.queue.join(id, user.id);
    reply.status(created ? 201 : 200);
    return status;
  }

  @Get('queue')
  @Roles('student')
  status(
    @Param('id', ParseIdPipe) id: number,
    @CurrentUser() user: AuthUser,
  ): Promise<QueueStatusView> {
    return this.queue.status(id, user.id);
  }

  @Delete('queue')
  @HttpCode(204)
  @Roles('student')
  async leave(@Param('id', ParseIdPipe) id: number, @CurrentUser() user: AuthUser): Promise<void> {
    await this.queue.leave(id, user.id);
  }

  @Get('stats')
  @Roles('admin')
  stats(@Param('id', ParseIdPipe) id: number): Promise<LectureStats> {
    return this.queue.stats(id);
  }
}
