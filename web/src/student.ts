import { ApiError, Enrollment, Lecture, QueueStatus, call } from './api.js';
import { $, h } from './dom.js';
import { clearError, showError } from './error-banner.js';
import { when } from './format.js';
import { renderLectures } from './lecture-list.js';
import { LiveQueue } from './live.js';
import { PanelState, renderPanel, tickCountdowns } from './queue-panel.js';
import { claims, forgetToken, readFragment, saveToken } from './session.js';

/** The student page: sign in, pick a lecture, wait live, enroll. */
let token = '';
let panel: PanelState | undefined;
let live: LiveQueue | undefined;
const CODES = ['FULL', 'CLOSED', 'NOT_OPEN'] as const;

function start(): void {
  const { token: saved, lectureId } = readFragment();
  $('#sign-in').addEventListener('submit', (e) => {
    e.preventDefault();
    const value = ($('#token') as HTMLTextAreaElement).value.trim();
    if (value) signIn(value, null);
  });
  $('#sign-out').addEventListener('click', () => {
    forgetToken();
    location.hash = '';
    location.reload();
  });
  setInterval(tickCountdowns, 1000);
  if (saved) signIn(saved, lectureId);
  else $('#sign-in').hidden = false;
}

function signIn(value: string, lectureId: number | null): void {
  token = value;
  saveToken(value);
  $('#sign-in').hidden = true;
  $('#app').hidden = false;
  $('#sign-out').hidden = false;
  $('#sign-out').textContent = `Sign out ${claims(value).sub ?? ''}`.trim();
  void loadLectures(lectureId);
  void loadEnrollments();
}

async function loadLectures(openId: number | null): Promise<void> {
  try {
    // Open ones first, then full ones (a cancellation can still free a seat), then scheduled.
    const lists = await Promise.all(
      ['OPEN', 'FULL', 'SCHEDULED'].map((s) =>
        call<{ items: Lecture[] }>(token, 'GET', `/lectures?status=${s}&limit=100`),
      ),
    );
    renderLectures(
      $('[data-testid="lecture-list"]'),
      lists.flatMap((l) => l.items),
      (l) => void choose(l, true),
    );
    if (openId) void choose(await call<Lecture>(token, 'GET', `/lectures/${openId}`), false);
  } catch (e) {
    showError(e, () => void loadLectures(openId));
  }
}

async function loadEnrollments(): Promise<void> {
  try {
    const { items } = await call<{ items: Enrollment[] }>(token, 'GET', '/me/enrollments');
    $('[data-testid="my-enrollments"]').replaceChildren(
      ...(items.length === 0
        ? [h('li', { class: 'meta' }, 'None yet.')]
        : items.map((e) =>
            h(
              'li',
              {},
              h('span', { class: 'lecture-title' }, e.title),
              h('span', { class: 'meta' }, when(e.enrolledAt)),
            ),
          )),
    );
  } catch (e) {
    showError(e, () => void loadEnrollments());
  }
}

/** Opens a lecture's panel; with `join`, joins its queue (a scheduled lecture is only shown). */
async function choose(lecture: Lecture, join: boolean): Promise<void> {
  stopLive();
  clearError();
  panel = { lecture };
  history.replaceState(null, '', `#lecture=${lecture.id}`);
  render();
  if (join && lecture.status !== 'SCHEDULED') await joinQueue();
  else await refresh();
}

async function joinQueue(): Promise<void> {
  if (!panel) return;
  await act(async () =>
    update(await call<QueueStatus>(token, 'POST', `/lectures/${panel!.lecture.id}/queue`)),
  );
}

async function refresh(): Promise<void> {
  if (!panel) return;
  await act(async () =>
    update(await call<QueueStatus>(token, 'GET', `/lectures/${panel!.lecture.id}/queue`)),
  );
}

async function enroll(): Promise<void> {
  if (!panel) return;
  await act(async () => {
    const res = await call<{ enrolledAt: string; seatsLeft: number }>(
      token,
      'POST',
      `/lectures/${panel!.lecture.id}/enroll`,
    );
    panel!.enrolledAt = res.enrolledAt;
    update({
      ...(panel!.status as QueueStatus),
      status: 'ENROLLED',
      seatsLeft: res.seatsLeft,
      ticketExpiresAt: null,
      position: null,
    });
    void loadEnrollments();
    void loadLectures(null); // seats left changed
  });
}

async function leaveQueue(): Promise<void> {
  if (!panel) return;
  await act(async () => {
    await call(token, 'DELETE', `/lectures/${panel!.lecture.id}/queue`);
    await refresh();
  });
}

/** Runs an action with the buttons disabled; a contract code becomes the panel's status. */
async function act(work: () => Promise<void>): Promise<void> {
  if (!panel) return;
  const mine = panel; // the student may choose another lecture before this answers
  mine.busy = true;
  render();
  try {
    clearError();
    await work();
  } catch (e) {
    if (panel === mine) fail(e, () => void act(work));
  } finally {
    mine.busy = false;
    render();
  }
}

function fail(e: unknown, retry?: () => void): void {
  if (panel && e instanceof ApiError && (CODES as readonly string[]).includes(e.code)) {
    panel.code = e.code as PanelState['code'];
    stopLive();
  }
  showError(e, retry);
  render();
}

/**
 * A new status: shown, and watched live while there is something to wait for — and already
 * before joining while seats are left, so a student on the page when registration opens hears
 * of an admission the moment it is granted, not once a stream opened after the join answered.
 */
function update(s: QueueStatus): void {
  // An answer for a lecture the student has since left (a slow join, a poll) changes nothing.
  if (!panel || s.lectureId !== panel.lecture.id) return;
  const was = panel.status?.status;
  panel.status = s;
  panel.code = undefined;
  if (s.status === 'WAITING' && (panel.startPosition === undefined || was !== 'WAITING'))
    panel.startPosition = s.position ?? undefined;
  if (s.status === 'ENROLLED' && was !== 'ENROLLED') void loadEnrollments();
  const watching =
    s.status === 'WAITING' ||
    s.status === 'ADMITTED' ||
    s.status === 'PRE_QUEUED' ||
    (s.status === 'NOT_QUEUED' && s.seatsLeft > 0);
  if (live && live.lectureId !== s.lectureId) stopLive(); // never watch another lecture
  if (watching && !live) {
    live = new LiveQueue(token, s.lectureId, {
      status: update,
      failed: (e) => fail(e),
      mode: (m) => {
        if (panel) panel.mode = m;
        render();
      },
    });
    live.start();
  }
  if (!watching && (s.status === 'ENROLLED' || s.seatsLeft === 0)) stopLive();
  render();
}

/** Stops watching: the next status worth watching opens a stream again. */
function stopLive(): void {
  live?.stop();
  live = undefined;
  if (panel) panel.mode = undefined;
}

function render(): void {
  if (panel)
    renderPanel($('#queue'), panel, {
      join: () => void joinQueue(),
      enroll: () => void enroll(),
      leave: () => void leaveQueue(),
    });
}

start();
