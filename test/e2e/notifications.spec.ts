import type { AddressInfo } from 'node:net';
import { sign } from 'jsonwebtoken';
import { SMTPServer } from 'smtp-server';
import request from 'supertest';
import { DataSource } from 'typeorm';
import type { Pool } from 'pg';
import { NO_ADDRESS, NotificationSender } from '../../src/notifications/notification.sender';
import { NewNotification, notificationsInsert } from '../../src/notifications/notification.types';
import { NotificationsService } from '../../src/notifications/notifications.service';
import { AdmissionService } from '../../src/queue/admission.service';
import { createLecture, enroll, eventually, join } from '../helpers/api';
import { RunningApp, TestContext } from '../helpers/test-context';
import { TEST_JWT_SECRET } from '../helpers/tokens';

const FROM = 'registrar@uni.example';
/** Generous: a retry after the mail server came back waits out its backoff (≤ 30 s). */
const DELIVERY_MS = 45_000;

/** A student's token, with an `email` claim when given. */
const studentToken = (sub: string, email?: unknown) =>
  sign({ sub, role: 'student', ...(email === undefined ? {} : { email }) }, TEST_JWT_SECRET, {
    algorithm: 'HS256',
    expiresIn: '1h',
  });
const as = (sub: string, email?: unknown) => ({
  Authorization: `Bearer ${studentToken(sub, email)}`,
});

interface Mail {
  from: string;
  to: string[];
  subject: string;
  raw: string;
}

/** A real SMTP server in this process: every mail it accepted, in order. */
class SmtpSink {
  readonly mails: Mail[] = [];
  /** recipients it refuses for good (550) */
  readonly refused = new Set<string>();
  private server?: SMTPServer;

  constructor(public port = 0) {}

  get url(): string {
    return `smtp://127.0.0.1:${this.port}`;
  }

  async start(): Promise<void> {
    const server = new SMTPServer({
      authOptional: true,
      disabledCommands: ['AUTH', 'STARTTLS'],
      logger: false,
      // The pool's idle connections are cut at once when the sink goes down.
      closeTimeout: 50,
      onRcptTo: (address, _session, done) => {
        if (!this.refused.has(address.address)) return done();
        done(Object.assign(new Error('no such mailbox'), { responseCode: 550 }));
      },
      onData: (stream, session, done) => {
        const chunks: Buffer[] = [];
        stream.on('data', (c: Buffer) => chunks.push(c));
        stream.on('end', () => {
          const raw = Buffer.concat(chunks).toString('utf8');
          const envelope = session.envelope;
          const headers = raw.split(/\r?\n\r?\n/)[0].replace(/\r?\n[ \t]+/g, ' ');
          this.mails.push({
            from: envelope.mailFrom ? envelope.mailFrom.address : '',
            to: envelope.rcptTo.map((r) => r.address),
            subject: /^Subject: (.*)$/im.exec(headers)?.[1] ?? '',
            raw,
          });
          done();
        });
      },
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.port, '127.0.0.1', () => resolve());
    });
    this.port = (server.server.address() as AddressInfo).port;
    this.server = server;
  }

  async stop(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  to(subject: string): Mail[] {
    return this.mails.filter((m) => m.subject === subject);
  }
}

const notice = (studentId: string, subject: string, lectureId = 1): NewNotification => ({
  studentId,
  kind: 'ADMITTED',
  lectureId,
  subject,
  text: `A seat came back in lecture ${lectureId}: enroll before your ticket expires.`,
});

type Row = { sent_at: Date | null; attempts: number; never: boolean; last_error: string | null }; // prettier-ignore

/** The rows of these subjects (one query: the test's connection runs one at a time). */
async function rowsOf(ctx: TestContext, ...subjects: string[]): Promise<Row[]> {
  return ctx.sql<Row>(
    `SELECT sent_at, attempts, next_attempt_at = 'infinity' AS never, last_error
       FROM notification WHERE subject = ANY ($1::text[]) ORDER BY id`,
    [subjects],
  );
}

/** Makes a request with a token carrying `email`, and waits until the address is stored. */
async function seeAddress(ctx: TestContext, app: RunningApp, sub: string, email: string) {
  const res = await request(app.url).get('/me/notifications').set(as(sub, email));
  expect(res.status).toBe(200);
  await eventually(async () => {
    const [row] = await ctx.sql<{ email: string }>(
      'SELECT email FROM student_contact WHERE student_id = $1',
      [sub],
    );
    return row?.email === email;
  }, 10_000);
}

const listOf = async (app: RunningApp, sub: string) => {
  const res = await request(app.url).get('/me/notifications').set(as(sub));
  expect(res.status).toBe(200);
  return res.body.items as {
    kind: string;
    lectureId: number;
    subject: string;
    createdAt: string;
    sentAt: string | null;
  }[];
};

describe('Notifications by e-mail (API.md v4)', () => {
  let ctx: TestContext;
  let sink: SmtpSink;
  let app: RunningApp;
  let service: NotificationsService;

  beforeAll(async () => {
    ctx = await TestContext.create();
    sink = new SmtpSink();
    await sink.start();
    app = await ctx.startApp({ mail: { smtpUrl: sink.url, from: FROM } });
    service = app.app.get(NotificationsService);
  });
  afterAll(async () => {
    await ctx?.close();
    await sink?.stop();
  });

  it('mails a recorded notification once, From MAIL_FROM To the address the token carried; lists it as sent to its student only', async () => {
    await seeAddress(ctx, app, 'nina', 'nina@uni.example');
    const subject = 'A seat in Compilers is yours to take';
    await service.record([notice('nina', subject, 7)]);

    await eventually(async () => (await listOf(app, 'nina'))[0]?.sentAt != null, DELIVERY_MS);
    const [item] = await listOf(app, 'nina');
    expect(item).toEqual({
      kind: 'ADMITTED',
      lectureId: 7,
      subject,
      createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      sentAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
    });
    expect(sink.to(subject)).toHaveLength(1);
    const [mail] = sink.to(subject);
    expect(mail.from).toBe(FROM);
    expect(mail.to).toEqual(['nina@uni.example']);
    expect(mail.raw).toMatch(/^From: registrar@uni\.example\r?$/m);
    expect(mail.raw).toMatch(/^To: nina@uni\.example\r?$/m);
    expect(mail.raw).toContain('enroll before your ticket expires');

    // Another student's list does not show it.
    expect(await listOf(app, 'omar')).toEqual([]);

    // Still once after later rounds: a later mail delivered means the sender went on.
    const marker = 'marker after the first';
    await service.record([notice('nina', marker)]);
    await eventually(async () => sink.to(marker).length === 1, DELIVERY_MS);
    expect(sink.to(subject)).toHaveLength(1);
    expect((await rowsOf(ctx, subject))[0].attempts).toBe(0);
  });

  it('mails the last address the service saw, and appends the timetable to an ENROLLED mail', async () => {
    await seeAddress(ctx, app, 'rosa', 'rosa@old.example');
    await seeAddress(ctx, app, 'rosa', 'rosa@new.example');
    const lecture = await createLecture(app.url, {
      title: 'Operating Systems',
      capacity: 5,
      opensAt: new Date(Date.now() - 60_000).toISOString(),
    });
    expect([200, 201]).toContain((await join(app.url, lecture.id, 'rosa')).status);
    while ((await app.app.get(AdmissionService).admit(lecture.id, 'event')) > 0);
    expect((await enroll(app.url, lecture.id, 'rosa')).status).toBe(201);

    const subject = 'Enrolled in Operating Systems';
    await service.record([
      { ...notice('rosa', subject, lecture.id), kind: 'ENROLLED', text: 'You are in.' },
    ]);
    await eventually(async () => sink.to(subject).length === 1, DELIVERY_MS);
    const [mail] = sink.to(subject);
    expect(mail.to).toEqual(['rosa@new.example']);
    expect(mail.raw).toContain('You are in.');
    expect(mail.raw).toMatch(/Your timetable in current/);
    expect(mail.raw).toMatch(new RegExp(`- Operating Systems \\(lecture ${lecture.id}`));
  });

  it('records nothing from a transaction that rolled back; what a committed one inserted is mailed', async () => {
    await seeAddress(ctx, app, 'tess', 'tess@uni.example');
    const db = app.app.get(DataSource);
    const rolledBack = 'from a rolled back transaction';
    await expect(
      db.transaction(async (m) => {
        const { sql, params } = notificationsInsert([notice('tess', rolledBack)]);
        await m.query(sql, params);
        throw new Error('roll it back');
      }),
    ).rejects.toThrow('roll it back');

    const committed = 'from a committed transaction';
    const runner = db.createQueryRunner();
    try {
      await runner.startTransaction();
      const { sql, params } = notificationsInsert([
        notice('tess', committed),
        notice('tess', `${committed} 2`),
      ]);
      await runner.query(sql, params);
      await runner.commitTransaction();
    } finally {
      await runner.release();
    }
    service.committed();

    await eventually(async () => sink.to(`${committed} 2`).length === 1, DELIVERY_MS);
    await eventually(async () => sink.to(committed).length === 1, DELIVERY_MS);
    expect(await rowsOf(ctx, rolledBack)).toEqual([]);
    expect(sink.to(rolledBack)).toEqual([]);
    expect((await listOf(app, 'tess')).map((i) => i.subject)).not.toContain(rolledBack);
  });

  it('a mail recorded again under its key (a try whose commit went unanswered) is one row', async () => {
    const key = '7f0c3a52-2c4e-4b8e-9d61-0a2b3c4d5e6f';
    const item = { ...notice('keyed', 'recorded twice'), key };
    const notifications = app.app.get(NotificationsService);
    await notifications.record([item]);
    await notifications.record([item, notice('keyed', 'recorded once')]);
    const rows = await ctx.sql<{ subject: string }>(`SELECT subject FROM notification WHERE student_id = 'keyed' ORDER BY id`); // prettier-ignore
    expect(rows.map((r) => r.subject)).toEqual(['recorded twice', 'recorded once']);
  });

  it('a student without a known address: listed unsent, given up without a retry loop; a bad claim is no address', async () => {
    // A token without an email claim, and one whose claim is not one address.
    expect((await request(app.url).get('/me/notifications').set(as('ghost'))).status).toBe(200);
    const bad = await request(app.url)
      .get('/me/notifications')
      .set(as('ghost', 'ghost@uni.example\r\nBcc: all@uni.example'));
    expect(bad.status).toBe(200);
    const subject = 'nobody to mail';
    await service.record([notice('ghost', subject)]);

    await eventually(async () => (await rowsOf(ctx, subject))[0]?.last_error === NO_ADDRESS, DELIVERY_MS); // prettier-ignore
    // Later rounds (a mail to another student delivered after it, twice) leave it alone.
    for (const marker of ['after the ghost 1', 'after the ghost 2']) {
      await service.record([notice('nina', marker)]);
      await eventually(async () => sink.to(marker).length === 1, DELIVERY_MS);
    }
    const [row] = await rowsOf(ctx, subject);
    expect(row).toEqual({ sent_at: null, attempts: 0, never: true, last_error: NO_ADDRESS });
    expect(await ctx.sql('SELECT 1 FROM student_contact WHERE student_id = $1', ['ghost'])).toEqual([]); // prettier-ignore
    expect(sink.to(subject)).toEqual([]);
    expect(sink.mails.flatMap((m) => m.to)).not.toContain('all@uni.example');
    expect(await listOf(app, 'ghost')).toEqual([
      expect.objectContaining({ kind: 'ADMITTED', subject, sentAt: null }),
    ]);
  });

  it('gives up a recipient the mail server refuses for good, without retrying it', async () => {
    await seeAddress(ctx, app, 'gone', 'gone@uni.example');
    sink.refused.add('gone@uni.example');
    const subject = 'to a mailbox that is no more';
    await service.record([notice('gone', subject)]);
    await eventually(async () => (await rowsOf(ctx, subject))[0]?.never === true, DELIVERY_MS);
    const marker = 'after the refused one';
    await service.record([notice('nina', marker)]);
    await eventually(async () => sink.to(marker).length === 1, DELIVERY_MS);
    const [row] = await rowsOf(ctx, subject);
    expect(row).toMatchObject({ sent_at: null, attempts: 0, never: true });
    expect(row.last_error).toMatch(/550/);
    expect(sink.to(subject)).toEqual([]);
  });

  it('documents GET /me/notifications in the served OpenAPI description, for students', async () => {
    const doc = (await (await fetch(`${app.url}/docs-json`)).json()) as {
      paths: Record<string, Record<string, Record<string, unknown>>>;
      components: { schemas: Record<string, { properties: Record<string, Record<string, unknown>> }> }; // prettier-ignore
    };
    const op = doc.paths['/me/notifications'].get;
    expect(op['x-roles']).toEqual(['student']);
    expect(JSON.stringify((op.responses as Record<string, unknown>)['200'])).toContain(
      '#/components/schemas/NotificationsView',
    );
    const item = doc.components.schemas.NotificationView.properties;
    expect(Object.keys(item).sort()).toEqual(['createdAt', 'kind', 'lectureId', 'sentAt', 'subject']); // prettier-ignore
    expect([...(item.kind.enum as string[])].sort()).toEqual(['ADMITTED', 'ENROLLED', 'GIVEN_UP']);
    expect(item.sentAt.nullable).toBe(true);
  });
});

describe('Notifications while the mail server is down', () => {
  let ctx: TestContext;
  let sink: SmtpSink;
  let app: RunningApp;

  beforeAll(async () => {
    ctx = await TestContext.create();
    // A port of our own with nobody on it until the sink starts there again.
    sink = new SmtpSink();
    await sink.start();
    await sink.stop();
    app = await ctx.startApp({ mail: { smtpUrl: sink.url, from: FROM } });
  });
  afterAll(async () => {
    await ctx?.close();
    await sink?.stop();
  });

  it('records at once, retries while it is down, and mails each exactly once when it is back', async () => {
    const students = ['dana', 'eli', 'fay'];
    for (const s of students) await seeAddress(ctx, app, s, `${s}@uni.example`);
    const subjects = students.map((s) => `while down, for ${s}`);

    // Recording waits for PostgreSQL only: it resolves with the mail server unreachable.
    await expect(
      app.app.get(NotificationsService).record(students.map((s, i) => notice(s, subjects[i]))),
    ).resolves.toBeUndefined();

    // The sender tried each and failed; nothing is sent, the list says so.
    await eventually(async () => {
      const rows = await rowsOf(ctx, ...subjects);
      return rows.length === 3 && rows.every((r) => r.attempts >= 1 && r.last_error !== null);
    }, DELIVERY_MS);
    for (const s of students) {
      expect((await listOf(app, s)).map((i) => i.sentAt)).toEqual([null]);
    }
    expect(sink.mails).toEqual([]);

    await sink.start(); // the same port
    await eventually(async () => {
      return (await rowsOf(ctx, ...subjects)).every((r) => r.sent_at !== null);
    }, DELIVERY_MS);
    for (const [i, s] of students.entries()) {
      expect(sink.to(subjects[i]).map((m) => m.to)).toEqual([[`${s}@uni.example`]]);
      expect((await listOf(app, s))[0].sentAt).not.toBeNull();
    }
    expect(sink.mails).toHaveLength(3);
  });
});

describe('Notifications with two sending instances over one database', () => {
  let ctx: TestContext;
  let sink: SmtpSink;
  let a: RunningApp;
  let b: RunningApp;

  beforeAll(async () => {
    ctx = await TestContext.create();
    sink = new SmtpSink();
    await sink.start();
    a = await ctx.startApp({ mail: { smtpUrl: sink.url, from: FROM } });
    b = await ctx.startApp({ mail: { smtpUrl: sink.url, from: FROM } });
  });
  afterAll(async () => {
    await ctx?.close();
    await sink?.stop();
  });

  it('20 notifications are 20 mails, none twice', async () => {
    const students = ['s1', 's2', 's3', 's4'];
    for (const [i, s] of students.entries()) {
      await seeAddress(ctx, i % 2 === 0 ? a : b, s, `${s}@uni.example`);
    }
    const items = Array.from({ length: 20 }, (_, i) => notice(students[i % 4], `mail ${i}`));
    // Recorded on both instances at once, each nudging its own sender.
    await Promise.all([
      a.app.get(NotificationsService).record(items.slice(0, 10)),
      b.app.get(NotificationsService).record(items.slice(10)),
    ]);
    await eventually(async () => {
      const [{ unsent }] = await ctx.sql<{ unsent: number }>(
        'SELECT count(*)::int AS unsent FROM notification WHERE sent_at IS NULL',
      );
      return unsent === 0;
    }, DELIVERY_MS);
    // Past one more round of each sender: nothing else arrives.
    for (const marker of ['marker a', 'marker b']) {
      const app = marker.endsWith('a') ? a : b;
      await app.app.get(NotificationsService).record([notice('s1', marker)]);
      await eventually(async () => sink.to(marker).length === 1, DELIVERY_MS);
    }
    const subjects = sink.mails.map((m) => m.subject).filter((s) => s.startsWith('mail '));
    expect(subjects).toHaveLength(20);
    expect(new Set(subjects).size).toBe(20);
    for (const [i, item] of items.entries()) {
      expect(sink.to(`mail ${i}`).map((m) => m.to)).toEqual([[`${item.studentId}@uni.example`]]);
    }
  });

  it("a mail accepted while its sender's PostgreSQL was down past the lease is not sent again by another", async () => {
    await seeAddress(ctx, a, 'cut', 'cut@uni.example');
    // a's sender cannot write sent_at (its PostgreSQL is unreachable from here on) ...
    const pool = (a.app.get(NotificationSender) as unknown as { pool: Pool }).pool;
    const query = pool.query.bind(pool) as (...args: unknown[]) => Promise<unknown>;
    const spy = jest.spyOn(pool, 'query').mockImplementation(((
      text: unknown,
      ...rest: unknown[]
    ) => {
      if (typeof text === 'string' && text.includes('SET sent_at')) {
        return Promise.reject(Object.assign(new Error('Connection terminated unexpectedly'), { code: 'ECONNRESET' })); // prettier-ignore
      }
      return query(text, ...rest);
    }) as never);
    // ... and b sends nothing until the row is a's.
    const bSender = b.app.get(NotificationSender) as unknown as { sendDue: () => Promise<number> };
    const bSend = jest.spyOn(bSender, 'sendDue').mockResolvedValue(0);
    try {
      const subject = 'accepted once';
      await a.app.get(NotificationsService).record([notice('cut', subject)]);
      await eventually(async () => sink.to(subject).length === 1, DELIVERY_MS);
      const [row] = await ctx.sql<{ id: string }>('SELECT id::text FROM notification WHERE subject = $1', [subject]); // prettier-ignore
      expect(sink.to(subject)[0].raw).toMatch(new RegExp(`^Message-ID: <notification\\.${row.id}\\.\\d{16}@uni\\.example>`, 'im')); // prettier-ignore
      // Its lease runs out while a still cannot write (as 120 s of an outage would): b claims it.
      await ctx.sql(`UPDATE notification SET claimed_until = now() - interval '1 second' WHERE id = $1`, [row.id]); // prettier-ignore
      bSend.mockRestore();
      await eventually(async () => (await rowsOf(ctx, subject))[0].sent_at !== null, DELIVERY_MS);
      // Past one more round of b: still one mail.
      await b.app.get(NotificationsService).record([notice('cut', 'after the lease')]);
      await eventually(async () => sink.to('after the lease').length === 1, DELIVERY_MS);
      expect(sink.to(subject)).toHaveLength(1);
    } finally {
      spy.mockRestore();
      bSend.mockRestore();
    }
  });
});
