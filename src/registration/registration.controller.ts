import {
  Body,
  Controller,
  Delete,
  Get,
  HttpCode,
  Param,
  Put,
  Query,
  Req,
  UseGuards,
} from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { ImportQuery } from '../catalog/catalog.dto';
import { ApiBody, ApiConsumes, ApiOperation, ApiTags } from '@nestjs/swagger';
import { AuthUser, CurrentUser } from '../auth/current-user.decorator';
import { Roles } from '../auth/roles.decorator';
import { ApiErrors } from '../docs/api-errors.decorator';
import { RateLimitGuard } from '../ratelimit/rate-limit.guard';
import { ParseStudentIdPipe, ParseTermPipe, ParseHoldCodePipe } from '../terms/term-params';
import { RecordsService } from './records.service';
import {
  HoldDto,
  HoldView,
  HoldsView,
  RecordsImportBody,
  RecordsImportView,
  RegistrationView,
  StudentRecordDto,
  StudentRecordView,
  WindowsDto,
  WindowsView,
} from './registration.dto';
import { RegistrationService } from './registration.service';
import { StudentHoldsService } from './student-holds.service';
import { WindowsService } from './windows.service';

export const RECORDS_ROUTE = '/terms/:term/students';

@ApiTags('registration')
@Controller()
export class RegistrationController {
  constructor(
    private readonly records: RecordsService,
    private readonly windows: WindowsService,
    private readonly holds: StudentHoldsService,
    private readonly registration: RegistrationService,
  ) {}

  /**
   * Many students' records at once, JSON or CSV (`Content-Type: text/csv`), up to 200,000 and
   * BULK_BODY_LIMIT_MB. Each named record is replaced; all or nothing: any invalid record and the
   * answer is 400 with every one listed in `errors`, and nothing changes. `?dryRun=true` answers
   * the same and changes nothing.
   */
  @ApiConsumes('application/json', 'text/csv')
  @ApiBody({ type: RecordsImportBody })
  @ApiErrors('FORBIDDEN', 'PAYLOAD_TOO_LARGE')
  @ApiOperation({ summary: "Import students' records of a term (JSON or CSV)" })
  @Put('terms/:term/students')
  @Roles('admin')
  importRecords(
    @Param('term', ParseTermPipe) term: string,
    @Query() q: ImportQuery,
    @Req() req: FastifyRequest,
  ): Promise<RecordsImportView> {
    const input = typeof req.body === 'string' ? { csv: req.body } : { json: req.body };
    return this.records.import(term, input, q.dryRun === 'true');
  }

  @ApiErrors('FORBIDDEN')
  @ApiOperation({
    summary: "A student's record in a term (the defaults for a student without one)",
  })
  @Get('terms/:term/students/:studentId')
  @Roles('admin')
  record(
    @Param('term', ParseTermPipe) term: string,
    @Param('studentId', ParseStudentIdPipe) studentId: string,
  ): Promise<StudentRecordView> {
    return this.records.get(term, studentId);
  }

  @ApiErrors('FORBIDDEN', 'PAYLOAD_TOO_LARGE')
  @ApiOperation({
    summary: "Replace a student's record in a term: credit limit, year, majors, groups",
    description:
      "A field left out is reset. maxCredits wins over the term's limit (an overload, or a " +
      'reduced load); year, majors and groups are what windows match. Joins follow it within ' +
      '1 s; an enroll is judged by it in its seat transaction. Nobody is dropped from a queue or a seat.',
  })
  // Every field may be left out (a PUT without a body resets the record to the defaults).
  @ApiBody({ type: StudentRecordDto, required: false })
  @Put('terms/:term/students/:studentId')
  @Roles('admin')
  putRecord(
    @Param('term', ParseTermPipe) term: string,
    @Param('studentId', ParseStudentIdPipe) studentId: string,
    @Body() dto: StudentRecordDto,
  ): Promise<StudentRecordView> {
    return this.records.put(term, studentId, dto);
  }

  @ApiErrors('FORBIDDEN')
  @ApiOperation({ summary: "Remove a student's record in a term: the defaults apply again" })
  @Delete('terms/:term/students/:studentId')
  @HttpCode(204)
  @Roles('admin')
  async removeRecord(
    @Param('term', ParseTermPipe) term: string,
    @Param('studentId', ParseStudentIdPipe) studentId: string,
  ): Promise<void> {
    await this.records.remove(term, studentId);
  }

  @ApiErrors()
  @ApiOperation({
    summary: "A term's registration windows, in the order they are judged",
    description: "Each window's seed is published once it opens (null before); its seedCommitment from the start.", // prettier-ignore
  })
  @Get('terms/:term/windows')
  getWindows(@Param('term', ParseTermPipe) term: string): Promise<WindowsView> {
    return this.windows.get(term);
  }

  @ApiErrors('FORBIDDEN', 'PAYLOAD_TOO_LARGE')
  @ApiOperation({
    summary: "Replace a term's registration windows",
    description:
      'With windows, a student may join and enroll in the term while a window that matches them is open; the ' +
      'first listed such window is in force and its maxCredits caps their limit. A window keeps its seed while ' +
      'its name stays. Joins follow within 1 s; enrolls are judged in their seat transaction.',
  })
  @Put('terms/:term/windows')
  @Roles('admin')
  putWindows(
    @Param('term', ParseTermPipe) term: string,
    @Body() dto: WindowsDto,
  ): Promise<WindowsView> {
    return this.windows.replace(term, dto.windows);
  }

  @ApiErrors('FORBIDDEN')
  @ApiOperation({ summary: "A student's holds" })
  @Get('students/:studentId/holds')
  @Roles('admin')
  listHolds(@Param('studentId', ParseStudentIdPipe) studentId: string): Promise<HoldsView> {
    return this.holds.list(studentId);
  }

  @ApiErrors('FORBIDDEN', 'PAYLOAD_TOO_LARGE')
  @ApiOperation({
    summary: 'Place a hold on a student (every term)',
    description:
      'Their joins and enrolls answer HOLD until it is lifted; leaving and cancelling still work. An ' +
      'enroll in flight commits before the hold is placed, or is refused.',
  })
  @Put('students/:studentId/holds/:code')
  @Roles('admin')
  placeHold(
    @Param('studentId', ParseStudentIdPipe) studentId: string,
    @Param('code', ParseHoldCodePipe) code: string,
    @Body() dto: HoldDto,
  ): Promise<HoldView> {
    return this.holds.place(studentId, code, dto.message);
  }

  @ApiErrors('FORBIDDEN')
  @ApiOperation({ summary: 'Lift a hold (204 also when there was none)' })
  @Delete('students/:studentId/holds/:code')
  @HttpCode(204)
  @Roles('admin')
  async liftHold(
    @Param('studentId', ParseStudentIdPipe) studentId: string,
    @Param('code', ParseHoldCodePipe) code: string,
  ): Promise<void> {
    await this.holds.lift(studentId, code);
  }

  @ApiErrors('FORBIDDEN', 'RATE_LIMITED')
  @ApiOperation({
    summary: 'My registration status in a term: window, next opening, holds, credits',
    description:
      "`now` is the service's clock: count down to nextOpensAt from it, not from the device's. " +
      '`reason` is the code a join would answer now (null: you may register).',
  })
  @Get('me/terms/:term/registration')
  @Roles('student')
  @UseGuards(RateLimitGuard)
  status(
    @CurrentUser() user: AuthUser,
    @Param('term', ParseTermPipe) term: string,
  ): Promise<RegistrationView> {
    return this.registration.status(term, user.id);
  }
}
