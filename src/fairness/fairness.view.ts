/** One entry of a lecture's admission log. */
export class AdmissionView {
  studentId: string;
  /** ISO 8601 */
  admittedAt: string;
  /** the student's place in the queue order: drawn students first, then joins after opening */
  queueSeq: number;
  /** `draw`: the student was drawn from the pre-queue; `queue`: joined after opening */
  via: 'draw' | 'queue';
}

export class AdmissionPage {
  items: AdmissionView[];
  /** pass as `after` for the next page; null when this page is the last */
  next: string | null;
}

export class DrawnStudentView {
  studentId: string;
  /** lowercase hex HMAC-SHA256(key = seed bytes, message = studentId as UTF-8) */
  hmac: string;
}

/** Everything an auditor needs to recompute a lecture's draw. */
export class DrawView {
  /** lowercase hex of the 32-byte seed */
  seed: string;
  /** lowercase hex SHA-256 of the seed's bytes, published since the lecture was created */
  seedCommitment: string;
  /** ISO 8601 time of the draw */
  drawnAt: string;
  /** in drawn order: ascending by hmac */
  items: DrawnStudentView[];
  /**
   * (v4) each registration window's draw of the lecture's pre-queue, by draw time: its students
   * ordered by HMAC-SHA256(key = the window's seed, published at GET /terms/:term/windows once it
   * opens, message = "<lecture id>:<sub>")
   */
  windows: WindowDrawView[];
}

export class WindowDrawView {
  window: string;
  /** ISO 8601 time of the draw */
  drawnAt: string;
  /** lowercase hex SHA-256 of the seed the window drew by (null: not known) */
  seedCommitment: string | null;
  /** that seed, lowercase hex: the window has opened, so it is published */
  seed: string | null;
  items: DrawnStudentView[];
}
