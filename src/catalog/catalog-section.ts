import { plainToInstance } from 'class-transformer';
import { ArrayMaxSize, ArrayUnique, IsArray, validateSync } from 'class-validator';
import { IsOmittable, IsRef } from '../common/validators';
import { validationMessages } from '../common/validation.pipe';
import { UpdateLectureDto } from '../lectures/dto/update-lecture.dto';
import type { ImportError } from './import-errors';

/**
 * One section of a catalog import (API.md v4): the body of `POST /lectures` with `ref`
 * required, no `term` (the route's) and `primaryRefs` in place of `primaryIds`. Every other
 * field may be omitted: a new section takes the defaults (and needs `title` and `capacity`),
 * an existing one keeps its values, as `PATCH` does.
 */
export class CatalogSectionDto extends UpdateLectureDto {
  /**
   * the refs of the sections (of this import or already in the term) it is taken with; omitted:
   * the stored primaries kept, as PATCH keeps an omitted field (catalog-links.ts)
   */
  @IsOmittable()
  @IsArray()
  @ArrayMaxSize(50)
  @ArrayUnique()
  @IsRef({ each: true })
  primaryRefs?: string[];
}

const VALIDATE = {
  whitelist: true,
  forbidNonWhitelisted: true,
  forbidUnknownValues: true,
  validationError: { target: false, value: false },
};

/** A section checked as the service checks a body: the DTO, or its errors (one per field). */
export function checkedSection(
  raw: unknown,
  row: number,
): { dto: CatalogSectionDto; errors: [] } | { dto: null; errors: ImportError[] } {
  const ref = refOf(raw);
  const fail = (field: string | null, message: string): ImportError => ({
    row,
    ref,
    code: 'VALIDATION_FAILED',
    field,
    message,
  });
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    return { dto: null, errors: [fail(null, 'a section must be an object')] };
  }
  const errors: ImportError[] = [];
  if (ref === null) errors.push(fail('ref', 'ref is required: the import matches sections by it'));
  if ('term' in raw) errors.push(fail('term', "term is the route's, not a section's"));
  const dto = plainToInstance(CatalogSectionDto, raw, { enableImplicitConversion: false });
  for (const e of validateSync(dto, VALIDATE)) {
    errors.push(fail(e.property, validationMessages([e]).join('; ')));
  }
  if ('primaryIds' in raw) {
    errors.push(fail('primaryIds', 'a catalog names primaries by primaryRefs, not primaryIds'));
  }
  return errors.length > 0 ? { dto: null, errors } : { dto, errors: [] };
}

function refOf(raw: unknown): string | null {
  const ref = (raw as { ref?: unknown } | null)?.ref;
  return typeof ref === 'string' && ref.length > 0 ? ref : null;
}
