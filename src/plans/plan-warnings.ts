import { RULES } from '../rules';
import type { PlannedLecture } from '../rules/term-rule';
import { PlanWarning } from './plans.dto';

export type { PlannedLecture } from '../rules/term-rule';

/**
 * What enrolling in every planned lecture would run into — the rules of the seat transaction
 * (src/rules/), as warnings, in the rules' order: a plan may hold alternatives (two sections,
 * a fallback at the same hour), so none of them refuses it. Lectures come in plan order.
 */
export function planWarnings(plan: PlannedLecture[], maxCredits: number): PlanWarning[] {
  return RULES.flatMap((rule): PlanWarning[] => rule.warnings(plan, maxCredits));
}
