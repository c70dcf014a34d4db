import { Type } from 'class-transformer';
import { IsInt, IsObject, Max, Min, ValidateNested } from 'class-validator';
import { IsIsoDateTime, IsNullable, IsOmittable, IsText } from '../../common/validators';
import { AdmissionSettingsDto } from './admission-settings.dto';
import { IsPrimaryIds, TimetableFieldsDto } from './timetable-fields';

export class CreateLectureDto extends TimetableFieldsDto {
  @IsText(1, 200) title: string;
  @IsInt() @Min(1) @Max(100_000) capacity: number;
  /** Defaults to now. */
  @IsOmittable() @IsIsoDateTime() opensAt?: Date;
  /** Defaults to never (null). */
  @IsNullable() @IsIsoDateTime() closesAt?: Date | null;
  /** A secondary section's primaries (ids of the term, same course, another component). */
  @IsPrimaryIds() primaryIds?: number[];
  @IsOmittable()
  @IsObject()
  @ValidateNested()
  @Type(() => AdmissionSettingsDto)
  admission?: AdmissionSettingsDto;
}
