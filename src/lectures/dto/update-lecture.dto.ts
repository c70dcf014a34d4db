import { Type } from 'class-transformer';
import { IsInt, IsObject, Max, Min, ValidateNested } from 'class-validator';
import { IsIsoDateTime, IsNullable, IsOmittable, IsText } from '../../common/validators';
import { AdmissionSettingsDto } from './admission-settings.dto';
import { IsPrimaryIds, TimetableFieldsDto } from './timetable-fields';

// Written out rather than derived with PartialType: PartialType's IsOptional would let
// `"title": null` through, and the contract wants it refused.
export class UpdateLectureDto extends TimetableFieldsDto {
  @IsOmittable() @IsText(1, 200) title?: string;
  @IsOmittable() @IsInt() @Min(1) @Max(100_000) capacity?: number;
  @IsOmittable() @IsIsoDateTime() opensAt?: Date;
  /** null clears it: the window then never closes. */
  @IsNullable() @IsIsoDateTime() closesAt?: Date | null;
  /** A secondary section's primaries (ids of the term, same course, another component). */
  @IsPrimaryIds() primaryIds?: number[];
  @IsOmittable()
  @IsObject()
  @ValidateNested()
  @Type(() => AdmissionSettingsDto)
  admission?: AdmissionSettingsDto;
}
