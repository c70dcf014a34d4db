import { creditLimit } from './credit-limit.rule';
import { hold } from './hold.rule';
import { sameCourse } from './same-course.rule';
import { timeConflict } from './time-conflict.rule';
import type { SeatScope, TermRule } from './term-rule';
import { windowClosed, windowNotOpen } from './window.rule';

/**
 * Who may register at all (API.md v4), judged before the seat: a refused student hears this
 * whether or not a seat is free, and keeps their ticket. In order: the first that refuses answers.
 */
export const GATES = [hold, windowNotOpen, windowClosed] as const;

/**
 * The term's rules, in the order they are judged (the first that refuses answers), only while
 * a seat is free (FULL comes first). Adding one is a file like these and its line here: the seat
 * statement, the enroll answer, the plan's warnings, the error codes and the OpenAPI description
 * follow.
 */
export const RULES = [sameCourse, timeConflict, creditLimit] as const;

export type GateCode = (typeof GATES)[number]['code'];
export type RuleCode = (typeof RULES)[number]['code'];
/** Every refusal the seat statement can answer for a student. */
export type RefusalCode = GateCode | RuleCode;

export const GATE_CODES = GATES.map((r) => r.code) as GateCode[];
export const RULE_CODES = RULES.map((r) => r.code) as RuleCode[];

const ALL: readonly TermRule[] = [...GATES, ...RULES];

/** Every refusal's code and HTTP status, for the error codes. */
export const REFUSAL_STATUS = Object.fromEntries(ALL.map((r) => [r.code, r.status ?? 409])) as {
  [C in RefusalCode]: 403 | 409;
};

/** A rule's code by name, for the code that branches on "a rule refused". */
export function isRuleCode(code: string): code is RuleCode {
  return (RULE_CODES as string[]).includes(code);
}

/** The rules' looks, as `sql AS name` items of the seat statement's per-student lateral. */
function looksSql(rules: readonly TermRule[], scope: SeatScope): string {
  return rules
    .flatMap((r) => Object.entries(r.looks(scope)).map(([name, sql]) => `${sql} AS ${name}`))
    .join(',\n           ');
}

/** The gates' looks (lateral `g`) and the rules' (lateral `c`, which may read `g`). */
export const gateLooksSql = (scope: SeatScope) => looksSql(GATES, scope);
export const ruleLooksSql = (scope: SeatScope) => looksSql(RULES, scope);

const refusalSql = (rules: readonly TermRule[]) =>
  `CASE ${rules.map((r) => `WHEN ${r.refuses} THEN '${r.code}'`).join(' ')} END`;

/** The first gate that refuses, as SQL: its code, or NULL. */
export const gateRefusalSql = refusalSql(GATES);
/** The first rule that refuses, as SQL: its code, or NULL. */
export const ruleRefusalSql = refusalSql(RULES);

const NO_SCOPE: SeatScope = {
  lectureIds: '0',
  meetings: '',
  studentId: "''",
  studentTermId: '0',
  maxCredits: 0,
  studentTerm: 'st',
  windows: 'tw',
  at: 'now()',
};

/** The look columns by name (gates' and rules'), for the statement's answer. */
export const RULE_COLUMNS = ALL.flatMap((r) => Object.keys(r.looks(NO_SCOPE)));
export const GATE_COLUMNS = GATES.flatMap((r) => Object.keys(r.looks(NO_SCOPE)));
export const SEAT_RULE_COLUMNS = RULES.flatMap((r) => Object.keys(r.looks(NO_SCOPE)));

/** The rule (gate or term rule) of a code. */
export function ruleOf(code: RefusalCode): TermRule {
  return ALL.find((r) => r.code === code)!;
}
