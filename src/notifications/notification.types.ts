/** What a mail tells the student (API.md v4, notifications). */
export type NotificationKind = 'ENROLLED' | 'GIVEN_UP' | 'ADMITTED';
export const NOTIFICATION_KINDS: readonly NotificationKind[] = ['ENROLLED', 'GIVEN_UP', 'ADMITTED'];

export interface NewNotification {
  studentId: string;
  kind: NotificationKind;
  lectureId: number;
  subject: string;
  /** the mail's text; for ENROLLED the sender appends the student's timetable in the term at send time */
  text: string;
  /** the same for every try of one mail recorded outside its cause's transaction (a UUID) */
  key?: string;
}

/**
 * One INSERT of many notifications, to run inside any transaction (`manager.query(sql, params)` /
 * `queryRunner.query`): the row exists exactly when its cause committed, and the sender of any
 * instance mails it after. Set-based (the columns as arrays, unnested), so its cost is one
 * statement whatever the number; no item: a statement that inserts nothing.
 */
export function notificationsInsert(items: NewNotification[]): { sql: string; params: unknown[] } {
  return {
    sql: `INSERT INTO notification (student_id, kind, lecture_id, subject, body, key)
          SELECT * FROM unnest($1::text[], $2::text[], $3::int[], $4::text[], $5::text[], $6::uuid[])
          ON CONFLICT (key) DO NOTHING`,
    params: [
      items.map((n) => n.studentId),
      items.map((n) => n.kind),
      items.map((n) => n.lectureId),
      items.map((n) => n.subject),
      items.map((n) => n.text),
      items.map((n) => n.key ?? null),
    ],
  };
}
