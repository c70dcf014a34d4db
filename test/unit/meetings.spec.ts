import { Meeting, meetingsProblem, overlaps } from '../../src/lectures/meetings';
import { planWarnings } from '../../src/plans/plan-warnings';

const MON_9: Meeting = { day: 'MON', start: '09:00', end: '10:00' };
const dated = (from?: string, until?: string): Meeting => ({ ...MON_9, from, until });

describe('Meetings by date (API.md v4)', () => {
  it.each([
    ['no dates on either side', true, MON_9, MON_9],
    ['the first and the second half of a term', false, dated(undefined, '2027-03-05'), dated('2027-03-08')], // prettier-ignore
    ['a last day that is the other’s first day (both bounds included)', true, dated(undefined, '2027-03-05'), dated('2027-03-05')], // prettier-ignore
    ['one unbounded against a bounded one', true, MON_9, dated('2027-03-08', '2027-03-08')],
    ['ranges that touch no day of each other', false, dated('2027-01-01', '2027-01-31'), dated('2027-02-01', '2027-02-28')], // prettier-ignore
    ['dates that meet at hours that do not', false, { ...dated('2027-01-01'), start: '10:00', end: '11:00' }, dated('2027-01-01')], // prettier-ignore
  ])('%s: overlap %s', (_, expected, a, b) => {
    expect(overlaps(a, b)).toBe(expected);
    expect(overlaps(b, a)).toBe(expected);
  });

  it('one lecture may meet at one weekday and hour in two date ranges, not in two that meet', () => {
    expect(meetingsProblem([dated(undefined, '2027-03-05'), dated('2027-03-06')])).toBeNull();
    expect(meetingsProblem([dated(undefined, '2027-03-05'), dated('2027-03-05')])).toBe(
      'meetings[1] overlaps meetings[0]',
    );
  });

  it('the plan warns of a time conflict only when the dates meet', () => {
    const lecture = (id: number, meetings: Meeting[]) => ({ id, courseCode: null, credits: 3, meetings }); // prettier-ignore
    const plan = [
      lecture(1, [dated('2027-01-11', '2027-03-05')]),
      lecture(2, [dated('2027-03-08', '2027-04-30')]),
      lecture(3, [dated('2027-04-30')]),
    ];
    expect(planWarnings(plan, 18)).toEqual([{ code: 'TIME_CONFLICT', lectureIds: [2, 3] }]);
  });
});
