import { Controller, Get, Param, Query } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { Roles } from '../auth/roles.decorator';
import { ParseIdPipe } from '../common/parse-id.pipe';
import { ApiErrors } from '../docs/api-errors.decorator';
import { AdmissionsQuery } from './dto/admissions.query';
import { FairnessService } from './fairness.service';
import { AdmissionPage, DrawView } from './fairness.view';

@ApiTags('fair opening')
@Controller('lectures/:id')
export class FairnessController {
  constructor(private readonly fairness: FairnessService) {}

  /** The seed, its commitment and the drawn order. 409 NOT_OPEN until the draw at opensAt. */
  @ApiErrors('FORBIDDEN', 'LECTURE_NOT_FOUND', 'NOT_OPEN')
  @ApiOperation({ summary: "Read the draw of a lecture's pre-queue" })
  @Get('draw')
  @Roles('admin')
  draw(@Param('id', ParseIdPipe) id: number): Promise<DrawView> {
    return this.fairness.draw(id);
  }

  /** The admission log as PostgreSQL holds it, in admission order, paged by cursor. */
  @ApiErrors('FORBIDDEN', 'LECTURE_NOT_FOUND')
  @ApiOperation({ summary: "Read a lecture's admission log" })
  @Get('admissions')
  @Roles('admin')
  admissions(
    @Param('id', ParseIdPipe) id: number,
    @Query() query: AdmissionsQuery,
  ): Promise<AdmissionPage> {
    return this.fairness.admissions(id, query);
  }
}
