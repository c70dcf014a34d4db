import { ERROR_STATUS } from '../../src/common/error-codes';
import { RULES, RULE_COLUMNS, isRuleCode, ruleRefusalSql } from '../../src/rules';

/** The term's rules live in src/rules/, one file each: everything else follows RULES. */
describe('The term rules (src/rules/)', () => {
  it('are judged in the contract’s order, each refusing with a 409 of its own code', () => {
    expect(RULES.map((r) => r.code)).toEqual(['SAME_COURSE', 'TIME_CONFLICT', 'CREDIT_LIMIT']);
    for (const rule of RULES) {
      expect([rule.code, ERROR_STATUS[rule.code]]).toEqual([rule.code, 409]);
      expect(isRuleCode(rule.code)).toBe(true);
    }
    expect(isRuleCode('FULL')).toBe(false);
    // The seat statement's CASE names them in the same order, the first that refuses answering.
    const order = RULES.map((r) => ruleRefusalSql.indexOf(`THEN '${r.code}'`));
    expect(order).toEqual([...order].sort((a, b) => a - b));
    expect(order.every((i) => i > 0)).toBe(true);
  });

  it('read columns of their own names in the seat statement', () => {
    expect(new Set(RULE_COLUMNS).size).toBe(RULE_COLUMNS.length);
    expect(RULE_COLUMNS).toEqual([
      'holds', // the gates': who may register at all
      'window_now',
      'window_next',
      'window_mine',
      'same_course', // the term's rules
      'clashes',
      'held_credits',
      'max_credits',
    ]);
  });

  it('tell the student why, naming the lectures in the way where the rule has some', () => {
    const [sameCourse, timeConflict, creditLimit] = RULES;
    expect(sameCourse.message({ same_course: [7] })).toBe('you already hold another section of this course in the term (lecture 7)'); // prettier-ignore
    expect(timeConflict.conflictsWith({ clashes: ['3', '9'] })).toEqual([3, 9]);
    expect(timeConflict.message({ clashes: [3, 9] })).toBe('a meeting overlaps one of lectures 3, 9, which you hold in the term'); // prettier-ignore
    expect(creditLimit.conflictsWith()).toBeNull();
    expect(creditLimit.message({ held_credits: 16, lecture_credits: 4, max_credits: 18 })).toBe("you hold 16 credits in the term; this lecture's 4 would exceed your limit of 18"); // prettier-ignore
  });
});
