/** One notification as GET /me/notifications lists it. */
export class NotificationView {
  /** ENROLLED (the service enrolled you), GIVEN_UP (your place was given up: why), ADMITTED (a seat is yours to take) */
  kind: 'ENROLLED' | 'GIVEN_UP' | 'ADMITTED';
  lectureId: number;
  subject: string;
  /** when it was recorded (ISO 8601) */
  createdAt: string;
  /** when the mail server accepted the mail (ISO 8601); null until then, and for a mail never sent (no address known) */
  sentAt: string | null;
}

/** GET /me/notifications: the student's last 50, newest first. */
export class NotificationsView {
  items: NotificationView[];
}
