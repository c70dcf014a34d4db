import { ApiError, Lecture, LectureStats, call } from './api.js';
import { $, h } from './dom.js';
import { clearError, showError } from './error-banner.js';
import { when } from './format.js';
import { clearFieldErrors, fillForm, readForm, showFieldError } from './lecture-form.js';
import { CATALOG_IMPORT } from './catalog-import.js';
import { wireCsvImport } from './csv-import.js';
import { wireCreditLimits } from './credit-limits.js';
import { wireHoldsEditor } from './holds-editor.js';
import { RECORDS_IMPORT } from './records-import.js';
import { wireWindowsEditor } from './windows-editor.js';
import { rosterPanel } from './roster.js';
import { LiveStats } from './live-stats.js';
import { claims, forgetToken, readFragment, saveToken, useTokenKey } from './session.js';
import { StatsChart } from './stats-chart.js';

/** The admin console: every lecture at a glance, a form to create and edit, live stats. */
let token = '';
let lectures: Lecture[] = [];
let chosen: { lecture: Lecture; live: LiveStats; chart: StatsChart } | undefined;
let editing: Lecture | null = null;
const TABLE_REFRESH_MS = 5000;

function start(): void {
  useTokenKey('enroll.admin-token');
  const { token: saved, lectureId } = readFragment();
  $('#sign-in').addEventListener('submit', (e) => {
    e.preventDefault();
    const value = ($('#token') as HTMLTextAreaElement).value.trim();
    if (value) void signIn(value, null);
  });
  $('#sign-out').addEventListener('click', () => {
    forgetToken();
    location.hash = '';
    location.reload();
  });
  const form = $('#lecture-form') as HTMLFormElement;
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    void save(form);
  });
  $('#new-lecture').addEventListener('click', () => edit(null));
  wireCreditLimits($('#limits-form') as HTMLFormElement, () => token);
  wireCsvImport(
    $('#catalog-form') as HTMLFormElement,
    CATALOG_IMPORT,
    () => token,
    () => void refresh(),
  );
  // Who may register when (v4): windows, students' records, holds.
  wireWindowsEditor($('[data-testid="windows-editor"]'), () => token);
  wireCsvImport($('#records-form') as HTMLFormElement, RECORDS_IMPORT, () => token);
  wireHoldsEditor($('[data-testid="holds-editor"]'), () => token);
  if (saved) void signIn(saved, lectureId);
  else $('#sign-in').hidden = false;
}

async function signIn(value: string, lectureId: number | null): Promise<void> {
  const { sub, role } = claims(value);
  if (role !== 'admin') {
    showError(
      new ApiError(403, 'FORBIDDEN', 'This console is for admins: your token has another role.'),
    );
    $('#sign-in').hidden = false;
    return;
  }
  token = value;
  saveToken(value);
  $('#sign-in').hidden = true;
  $('#app').hidden = false;
  const out = $('#sign-out');
  out.textContent = `Sign out ${sub ?? ''}`;
  out.hidden = false;
  await refresh();
  setInterval(() => void refresh(), TABLE_REFRESH_MS);
  const first = lectures.find((l) => l.id === lectureId);
  if (first) choose(first);
}

/** The table: every lecture with its status, seats left, waiting and active tickets. */
async function refresh(): Promise<void> {
  try {
    const list = await call<{ items: Lecture[] }>(token, 'GET', '/lectures?limit=100');
    lectures = list.items;
    const stats = await Promise.all(
      lectures.map((l) =>
        call<LectureStats>(token, 'GET', `/lectures/${l.id}/stats`).catch(() => null),
      ),
    );
    $('#lecture-rows').replaceChildren(
      ...lectures.map((l, i) => {
        const s = stats[i];
        return h(
          'tr',
          { id: `row-${l.id}`, class: chosen?.lecture.id === l.id ? 'chosen' : undefined },
          h(
            'td',
            {},
            h('button', { type: 'button', class: 'link', onclick: () => choose(l) }, l.title),
          ),
          h('td', {}, h('span', { class: `badge ${l.status}` }, l.status)),
          h(
            'td',
            { class: 'num', 'data-cell': 'seats' },
            `${s?.seatsLeft ?? l.seatsLeft} / ${l.capacity}`,
          ),
          h(
            'td',
            { class: 'num', 'data-cell': 'waiting' },
            s ? String(s.waiting + s.preQueued) : '–',
          ),
          h('td', { class: 'num', 'data-cell': 'tickets' }, s ? String(s.activeTickets) : '–'),
          h(
            'td',
            {},
            h('button', { type: 'button', class: 'secondary', onclick: () => edit(l) }, 'Edit'),
          ),
        );
      }),
    );
    clearError();
  } catch (e) {
    showError(e, () => void refresh());
  }
}

/** A lecture's live panel: its figures and the chart, from the stats stream. */
function choose(l: Lecture): void {
  chosen?.live.stop();
  chosen?.chart.destroy();
  history.replaceState(null, '', `#lecture=${l.id}`);
  const panel = $('#live');
  const figures = h('dl', {
    class: 'figures',
    'data-testid': `stats-${l.id}`,
    'aria-live': 'polite',
  });
  const host = h('div');
  panel.replaceChildren(
    h('h2', {}, `${l.title} — live`),
    h(
      'p',
      { class: 'meta' },
      `opens ${when(l.opensAt)}${l.closesAt ? ` · closes ${when(l.closesAt)}` : ''}`,
    ),
    figures,
    host,
  );
  panel.hidden = false;
  void rosterPanel(token, l.id, l.title).then((roster) => {
    if (chosen?.lecture.id === l.id) panel.append(roster);
  });
  const chart = new StatsChart(host);
  const live = new LiveStats(token, l.id, {
    stats: (s) => {
      chart.push(s);
      // The chosen lecture's row follows the stream too, not only the table's refresh.
      const cell = (name: string) => document.querySelector(`#row-${l.id} [data-cell="${name}"]`);
      const capacity = s.enrolled + s.seatsLeft;
      cell('seats')?.replaceChildren(`${s.seatsLeft} / ${capacity}`);
      cell('waiting')?.replaceChildren(String(s.waiting + s.preQueued));
      cell('tickets')?.replaceChildren(String(s.activeTickets));
      figures.replaceChildren(
        ...[
          ['waiting', s.waiting],
          ['pre-queued', s.preQueued],
          ['active tickets', s.activeTickets],
          ['enrolled', s.enrolled],
          ['seats left', s.seatsLeft],
          ['admitted / s', s.admittedPerSecond ?? 0],
        ].map(([k, v]) =>
          h('div', {}, h('dt', {}, String(k)), h('dd', { 'data-figure': String(k) }, String(v))),
        ),
      );
    },
    failed: (e) => showError(e),
  });
  live.start();
  chosen = { lecture: l, live, chart };
  edit(l);
}

function edit(l: Lecture | null): void {
  editing = l;
  const form = $('#lecture-form') as HTMLFormElement;
  fillForm(form, l);
  $('#form-title').textContent = l ? `Edit “${l.title}”` : 'New lecture';
  $('#form-submit').textContent = l ? 'Save changes' : 'Create lecture';
}

async function save(form: HTMLFormElement): Promise<void> {
  clearFieldErrors(form);
  clearError();
  const body = readForm(form, editing !== null);
  try {
    const saved = editing
      ? await call<Lecture>(token, 'PATCH', `/lectures/${editing.id}`, body)
      : await call<Lecture>(token, 'POST', '/lectures', body);
    $('#form-status').textContent = editing
      ? `Saved “${saved.title}”.`
      : `Created “${saved.title}”.`;
    await refresh();
    choose(saved);
  } catch (e) {
    if (!(e instanceof ApiError && showFieldError(form, e))) showError(e);
  }
}

start();
