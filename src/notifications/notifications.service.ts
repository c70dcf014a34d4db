import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { ContactBook } from './contact-book';
import { NotificationSender } from './notification.sender';
import { NewNotification, NotificationKind, notificationsInsert } from './notification.types';
import type { NotificationsView } from './notifications.view';

/** How many of a student's notifications GET /me/notifications lists. */
export const LISTED = 50;

/**
 * The e-mail notifications of API.md v4: recorded in the transaction that causes them (by any
 * instance), mailed after the commit by the instances with SMTP_URL (NotificationSender), to the
 * address the student's token last carried (ContactBook).
 */
@Injectable()
export class NotificationsService {
  constructor(
    @InjectDataSource() private readonly db: DataSource,
    private readonly sender: NotificationSender,
    private readonly contacts: ContactBook,
  ) {}

  /**
   * Records in a transaction of its own (for causes without a PostgreSQL transaction, e.g. an
   * admission in Redis) and nudges the sender. Waits for PostgreSQL only, never for SMTP.
   */
  async record(items: NewNotification[]): Promise<void> {
    if (items.length === 0) return;
    const { sql, params } = notificationsInsert(items);
    await this.db.query(sql, params);
    this.committed();
  }

  /**
   * Call after a transaction that inserted notifications committed: the sender looks now rather
   * than at its next poll (no-op without SMTP_URL).
   */
  committed(): void {
    this.sender.nudge();
  }

  /** The student's last 50, newest first. */
  async list(studentId: string): Promise<NotificationsView> {
    const rows: ListedRow[] = await this.db.query(
      `SELECT kind, lecture_id, subject, created_at, sent_at FROM notification
        WHERE student_id = $1 ORDER BY created_at DESC, id DESC LIMIT ${LISTED}`,
      [studentId],
    );
    return {
      items: rows.map((r) => ({
        kind: r.kind,
        lectureId: r.lecture_id,
        subject: r.subject,
        createdAt: r.created_at.toISOString(),
        sentAt: r.sent_at?.toISOString() ?? null,
      })),
    };
  }

  /** The token's email claim as the guard saw it: kept so mails go to the last address seen. */
  noteEmail(studentId: string, email: string): void {
    this.contacts.note(studentId, email);
  }
}

interface ListedRow {
  kind: NotificationKind;
  lecture_id: number;
  subject: string;
  created_at: Date;
  sent_at: Date | null;
}
