import type { ChannelEvent } from '../news/admission-channel';

/** One first join in progress: whether this instance heard its student admitted meanwhile. */
export interface JoinInProgress {
  admitted: boolean;
}

/**
 * The first joins running on this instance, and which of their students the admission news
 * admitted while they ran. A join reads its place early and answers after its follow-up (the
 * news, the cron's listing); an admission in between — another request's, at an opening's
 * rate — reaches the student's open stream as ADMITTED before that answer, which still says
 * WAITING. A page shows whichever came last, so the student saw WAITING until the stream's next
 * re-read, 5 s on (one seat in a stampede of 5,000 at a time: its fill went from ~0.8 s to
 * ~5.5 s). A join whose student was heard admitted reads its place again before answering.
 */
export class AdmittedWhileJoining {
  private readonly running = new Map<string, Set<JoinInProgress>>();

  start(lectureId: number, studentId: string): JoinInProgress {
    const join = { admitted: false };
    const key = `${lectureId} ${studentId}`;
    const joins = this.running.get(key);
    if (joins) joins.add(join);
    else this.running.set(key, new Set([join]));
    return join;
  }

  end(lectureId: number, studentId: string, join: JoinInProgress): void {
    const key = `${lectureId} ${studentId}`;
    const joins = this.running.get(key);
    joins?.delete(join);
    if (joins?.size === 0) this.running.delete(key);
  }

  /** The channel's news, as this instance's live streams hear it. */
  heard(event: ChannelEvent): void {
    if (event.kind !== 'admitted' || this.running.size === 0) return;
    for (const student of event.students) {
      const joins = this.running.get(`${event.lectureId} ${student}`);
      if (joins) for (const join of joins) join.admitted = true;
    }
  }
}
