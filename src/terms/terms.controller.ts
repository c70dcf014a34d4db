import { Body, Controller, Get, Param, Put, Query, UseGuards } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { AuthUser, CurrentUser } from '../auth/current-user.decorator';
import { Roles } from '../auth/roles.decorator';
import { ApiErrors } from '../docs/api-errors.decorator';
import { RateLimitGuard } from '../ratelimit/rate-limit.guard';
import { ParseTermPipe } from './term-params';
import { CreditLimitDto, TermView, TimetableQuery, TimetableView } from './terms.dto';
import { TermsService } from './terms.service';

@ApiTags('terms')
@Controller()
export class TermsController {
  constructor(private readonly terms: TermsService) {}

  @ApiErrors()
  @ApiOperation({ summary: "Read a term's credit limit (MAX_CREDITS until set)" })
  @Get('terms/:term')
  term(@Param('term', ParseTermPipe) term: string): Promise<TermView> {
    return this.terms.term(term);
  }

  @ApiErrors('FORBIDDEN', 'PAYLOAD_TOO_LARGE')
  @ApiOperation({
    summary: "Set a term's credit limit",
    description: 'Applies to enrolls from then on; a lowered limit drops nobody.',
  })
  @Put('terms/:term')
  @Roles('admin')
  setTerm(
    @Param('term', ParseTermPipe) term: string,
    @Body() dto: CreditLimitDto,
  ): Promise<TermView> {
    return this.terms.setTermLimit(term, dto.maxCredits);
  }

  @ApiErrors('FORBIDDEN', 'RATE_LIMITED')
  @ApiOperation({ summary: 'My timetable in a term (DEFAULT_TERM without ?term)' })
  @Get('me/timetable')
  @Roles('student')
  @UseGuards(RateLimitGuard)
  timetable(@CurrentUser() user: AuthUser, @Query() q: TimetableQuery): Promise<TimetableView> {
    return this.terms.timetable(user.id, q.term);
  }
}
