import { Body, Controller, Get, Param, Patch, Post, Query } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { ApiErrors } from '../docs/api-errors.decorator';
import { Roles } from '../auth/roles.decorator';
import { ParseIdPipe } from '../common/parse-id.pipe';
import { CreateLectureDto } from './dto/create-lecture.dto';
import { ListLecturesQuery } from './dto/list-lectures.query';
import { UpdateLectureDto } from './dto/update-lecture.dto';
import { LectureList, LectureView } from './lecture.view';
import { LecturesService } from './lectures.service';

@ApiTags('lectures')
@Controller('lectures')
export class LecturesController {
  constructor(private readonly lectures: LecturesService) {}

  @ApiErrors('FORBIDDEN', 'PAYLOAD_TOO_LARGE')
  @ApiOperation({ summary: 'Create a lecture' })
  @Post()
  @Roles('admin')
  create(@Body() dto: CreateLectureDto): Promise<LectureView> {
    return this.lectures.create(dto);
  }

  @ApiErrors('FORBIDDEN', 'LECTURE_NOT_FOUND', 'CAPACITY_BELOW_ENROLLED', 'PAYLOAD_TOO_LARGE')
  @ApiOperation({ summary: 'Edit a lecture' })
  @Patch(':id')
  @Roles('admin')
  update(
    @Param('id', ParseIdPipe) id: number,
    @Body() dto: UpdateLectureDto,
  ): Promise<LectureView> {
    return this.lectures.update(id, dto);
  }

  @ApiOperation({ summary: 'List lectures' })
  @ApiErrors()
  @Get()
  list(@Query() query: ListLecturesQuery): Promise<LectureList> {
    return this.lectures.list(query);
  }

  @ApiErrors('LECTURE_NOT_FOUND')
  @ApiOperation({ summary: 'Read a lecture' })
  @Get(':id')
  get(@Param('id', ParseIdPipe) id: number): Promise<LectureView> {
    return this.lectures.get(id);
  }
}
