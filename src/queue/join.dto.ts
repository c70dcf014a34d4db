import { IsBoolean, IsInt, Max, Min } from 'class-validator';
import { IsLectureIds, IsOmittable } from '../common/validators';
import type { AutoSettings } from '../auto-enroll/auto-enroll.types';

/** POST /lectures/:id/queue's optional body (API.md v4, automatic enrollment). */
export class JoinBodyDto {
  /**
   * When admitted, the service enrolls you itself, as your own POST …/enroll with `sections`
   * and `swapFrom` would; a refusal gives the place up (`lastRefusal` says why). A repeat join
   * with a body sets it (false clears it) without losing the place; one without keeps it.
   */
  @IsOmittable() @IsBoolean() autoEnroll?: boolean;
  /** the secondary sections to take with the lecture, as the enroll's */
  @IsOmittable() @IsLectureIds(50) sections?: number[];
  /** the held lecture to swap from, as the enroll's */
  @IsOmittable() @IsInt() @Min(1) @Max(2_147_483_647) swapFrom?: number;
}

/** POST /me/terms/:term/plan/queue's optional body. */
export class JoinAllBodyDto {
  /** every lecture of the plan enrolls you itself when you are admitted */
  @IsOmittable() @IsBoolean() autoEnroll?: boolean;
}

/**
 * What a join's body asks of auto-enroll: settings, null (not), or undefined when no body came
 * (a repeat join keeps what it had); an empty object counts as no body.
 */
export function autoOf(body: JoinBodyDto | undefined | null): AutoSettings | null | undefined {
  // Fields the body left out are own properties set to undefined on the transformed DTO.
  if (!body || Object.values(body).every((v) => v === undefined)) return undefined;
  if (!body.autoEnroll) return null;
  return {
    ...(body.sections ? { sections: body.sections } : {}),
    ...(body.swapFrom !== undefined ? { swapFrom: body.swapFrom } : {}),
  };
}
