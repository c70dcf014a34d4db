import { IsInt, Matches, Max, Min } from 'class-validator';
import { IsOmittable } from '../../common/validators';
import { QueryInt } from '../../lectures/dto/list-lectures.query';

export class AdmissionsQuery {
  /** Admissions per page (1–1000, default 100). */
  @IsOmittable() @QueryInt() @IsInt() @Min(1) @Max(1000) limit?: number;
  /** The `next` cursor of the previous page. */
  @IsOmittable()
  @Matches(/^[0-9]{1,15}-[0-9]{1,15}$/, { message: 'after must be a cursor from a previous page' })
  after?: string;
}
