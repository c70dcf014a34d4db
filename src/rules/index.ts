import { creditLimit } from './credit-limit.rule';
import { sameCourse } from './same-course.rule';
import { timeConflict } from './time-conflict.rule';
import type { SeatScope } from './term-rule';

/**
 * The term's rules, in the order they are judged (the first that refuses answers). Adding one
 * is a file like these and its line here: the seat statement, the enroll answer, the plan's
 * warnings, the error codes and the OpenAPI description follow.
 */
export const RULES = [sameCourse, timeConflict, creditLimit] as const;

export type RuleCode = (typeof RULES)[number]['code'];

export const RULE_CODES = RULES.map((r) => r.code) as RuleCode[];

/** A rule's code by name, for the code that branches on "a rule refused". */
export function isRuleCode(code: string): code is RuleCode {
  return (RULE_CODES as string[]).includes(code);
}

/** Every rule's columns, as `sql AS name` items of the seat statement's per-student look. */
export function ruleLooksSql(scope: SeatScope): string {
  return RULES.flatMap((r) =>
    Object.entries(r.looks(scope)).map(([name, sql]) => `${sql} AS ${name}`),
  ).join(',\n           ');
}

/** The first rule that refuses, as SQL: its code, or NULL. */
export const ruleRefusalSql = `CASE ${RULES.map((r) => `WHEN ${r.refuses} THEN '${r.code}'`).join(' ')} END`; // prettier-ignore

/** The look columns by name, for the statement's answer. */
export const RULE_COLUMNS = RULES.flatMap((r) =>
  Object.keys(
    r.looks({ lectureIds: '0', meetings: '', studentId: "''", studentTermId: '0', maxCredits: 0 }),
  ),
);

/** The rule of a code. */
export function ruleOf(code: RuleCode) {
  return RULES.find((r) => r.code === code)!;
}
