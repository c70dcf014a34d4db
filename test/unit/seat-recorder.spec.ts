import { SeatRecorder } from '../../src/holds/seat-recorder';
import type { LectureFacts } from '../../src/lectures/lecture-facts';
import type { SeatChange } from '../../src/lectures/lecture-facts.store';

const lecture = (id: number, version: number) => ({ id, version }) as LectureFacts;

describe('SeatRecorder: one Redis record per group commit', () => {
  let writes: { id: number; version: number; change: SeatChange; students: string[] }[];
  let recorder: SeatRecorder;
  let fail: Error | undefined;

  beforeEach(() => {
    writes = [];
    fail = undefined;
    recorder = new SeatRecorder(async (l, change, students) => {
      writes.push({ id: l.id, version: l.version, change, students });
      if (fail) throw fail;
    });
  });

  it("a batch's students, settled in one turn's microtasks, go out in one write of the newest row", async () => {
    // As the batcher resolves a batch: every waiter's continuation runs in the same turn.
    const settled = [3, 5, 4].map((version, i) =>
      Promise.resolve().then(() => recorder.record(lecture(1, version), 'enrolled', `s${i}`)),
    );
    await Promise.all(settled);
    expect(writes).toEqual([
      { id: 1, version: 5, change: 'enrolled', students: ['s0', 's1', 's2'] },
    ]);
  });

  it('keeps lectures and kinds of change apart, and a later turn makes a write of its own', async () => {
    await Promise.all([
      recorder.record(lecture(1, 2), 'enrolled', 'a'),
      recorder.record(lecture(1, 2), '', 'b'),
      recorder.record(lecture(2, 7), 'enrolled', 'c'),
    ]);
    await recorder.record(lecture(1, 3), 'enrolled', 'd');
    expect(writes).toEqual([
      { id: 1, version: 2, change: 'enrolled', students: ['a'] },
      { id: 1, version: 2, change: '', students: ['b'] },
      { id: 2, version: 7, change: 'enrolled', students: ['c'] },
      { id: 1, version: 3, change: 'enrolled', students: ['d'] },
    ]);
  });

  it("a failed write fails every student's record in it", async () => {
    fail = new Error('Redis refused');
    const results = await Promise.allSettled([
      recorder.record(lecture(1, 1), 'enrolled', 'a'),
      recorder.record(lecture(1, 1), 'enrolled', 'b'),
    ]);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected']);
    expect(writes).toHaveLength(1);
  });
});
