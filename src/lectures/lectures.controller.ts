import { Body, Controller, Get, Param, Patch, Post, Query } from '@nestjs/common';
import { Roles } from '../auth/roles.decorator';
import { ParseIdPipe } from '../common/parse-id.pipe';
import { CreateLectureDto } from './dto/create-lecture.dto';
import { ListLecturesQuery } from './dto/list-lectures.query';
import { UpdateLectureDto } from './dto/update-lecture.dto';
import { LectureView } from './lecture.view';
import { LecturesService } from './lectures.service';

@Controller('lectures')
export class LecturesController {
  constructor(private readonly lectures: LecturesService) {}

  @Post()
  @Roles('admin')
  create(@Body() dto: CreateLectureDto): Promise<LectureView> {
    return this.lectures.create(dto);
  }

  @Patch(':id')
  @Roles('admin')
  update(
    @Param('id', ParseIdPipe) id: number,
    @Body() dto: UpdateLectureDto,
  ): Promise<LectureView> {
    return this.lectures.update(id, dto);
  }

  @Get()
  list(@Query() query: ListLecturesQuery): Promise<{ items: LectureView[]; total: number }> {
    return this.lectures.list(query);
  }

  @Get(':id')
  get(@Param('id', ParseIdPipe) id: number): Promise<LectureView> {
    return this.lectures.get(id);
  }
}
