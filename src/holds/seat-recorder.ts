import type { LectureFacts } from '../lectures/lecture-facts';
import type { SeatChange } from '../lectures/lecture-facts.store';

type Write<T> = (lecture: LectureFacts, change: SeatChange, students: T[]) => Promise<void>;

interface Pending<T> {
  lecture: LectureFacts;
  change: SeatChange;
  students: T[];
  waiters: { resolve: () => void; reject: (err: unknown) => void }[];
}

/**
 * Tells Redis what committed enrolls did, once per group commit rather than once per student.
 * The batcher settles every student of a transaction in the same turn, so the records asked
 * for before that turn's microtasks run out go out together: the lecture row of the newest
 * version, every student's seat, the end of every hold, one "slot freed" (a 200-seat commit
 * costs three Redis round trips, not 600).
 */
export class SeatRecorder<T = string> {
  private readonly pending = new Map<string, Pending<T>>();

  constructor(private readonly write: Write<T>) {}

  /** Resolves once this student's change is written with the rest of its turn's. */
  record(lecture: LectureFacts, change: SeatChange, student: T): Promise<void> {
    const key = `${lecture.id}:${change}`;
    let group = this.pending.get(key);
    if (!group) {
      // nextTick runs once the current microtasks (the batch's other students) are done.
      if (this.pending.size === 0) process.nextTick(() => this.flush());
      this.pending.set(key, (group = { lecture, change, students: [], waiters: [] }));
    }
    if (lecture.version > group.lecture.version) group.lecture = lecture;
    group.students.push(student);
    return new Promise((resolve, reject) => group.waiters.push({ resolve, reject }));
  }

  private flush(): void {
    const groups = [...this.pending.values()];
    this.pending.clear();
    for (const g of groups) {
      this.write(g.lecture, g.change, g.students).then(
        () => g.waiters.forEach((w) => w.resolve()),
        (err: unknown) => g.waiters.forEach((w) => w.reject(err)),
      );
    }
  }
}
