import type { Lecture, Timetable, TimetableItem } from './api.js';
import { h } from './dom.js';
import { DAY_NAMES, meetingsText } from './format.js';

const WEEK = Object.keys(DAY_NAMES);
const minutes = (hhmm: string) => Number(hhmm.slice(0, 2)) * 60 + Number(hhmm.slice(3, 5));

/**
 * The week as a picture: days across (Monday to Friday, and the weekend when something meets
 * then), hours down, one block per meeting of each held lecture, placed and sized by its time.
 * Lectures without meetings are listed under it. Each held lecture can be dropped from here.
 * Planned lectures not held yet are drawn apart: outlined, in the right half of their slot.
 */
export function renderTimetable(
  root: HTMLElement,
  t: Timetable,
  onDrop: (item: TimetableItem) => void,
  planned: Lecture[] = [],
): void {
  const wanted = planned.filter((l) => !t.items.some((i) => i.lectureId === l.id));
  const meetings = [
    ...t.items.flatMap((item) => item.meetings.map((m) => ({ item, m, plan: false }))),
    ...wanted.flatMap((l) =>
      l.meetings.map((m) => ({
        item: { lectureId: l.id, title: l.title, courseCode: l.courseCode, location: l.location },
        m,
        plan: true,
      })),
    ),
  ];
  const days = WEEK.filter((d, i) => i < 5 || meetings.some(({ m }) => m.day === d));
  const first = Math.min(8 * 60, ...meetings.map(({ m }) => minutes(m.start)));
  const last = Math.max(18 * 60, ...meetings.map(({ m }) => minutes(m.end)));
  const from = Math.floor(first / 60) * 60;
  const to = Math.ceil(last / 60) * 60;
  const span = to - from;

  const hours = h('div', { class: 'tt-hours', 'aria-hidden': 'true' });
  for (let at = from; at < to; at += 60) {
    const label = h('span', {}, `${String(at / 60).padStart(2, '0')}:00`);
    label.style.top = `${((at - from) / span) * 100}%`;
    hours.append(label);
  }
  const columns = days.map((day) => {
    const col = h('div', { class: 'tt-day', role: 'group', 'aria-label': DAY_NAMES[day] });
    for (const { item, m, plan } of meetings.filter((x) => x.m.day === day)) {
      const block = h(
        'div',
        {
          class: plan ? 'tt-block planned' : 'tt-block',
          'data-testid': plan ? `planned-${item.lectureId}` : `timetable-${item.lectureId}`,
          title: `${item.title} · ${m.start}–${m.end}${item.location ? ` · ${item.location}` : ''}`,
        },
        h('strong', {}, item.courseCode ?? item.title),
        item.courseCode ? h('span', {}, item.title) : null,
        h('span', { class: 'tt-time' }, `${m.start}–${m.end}`),
        item.location ? h('span', {}, item.location) : null,
      );
      // Properties, not a style attribute: the page's CSP allows them.
      block.style.top = `${((minutes(m.start) - from) / span) * 100}%`;
      block.style.height = `${((minutes(m.end) - minutes(m.start)) / span) * 100}%`;
      col.append(block);
    }
    return col;
  });
  const grid = h(
    'div',
    { class: 'tt-grid' },
    h('div', { class: 'tt-corner' }),
    ...days.map((d) => h('div', { class: 'tt-head' }, DAY_NAMES[d])),
    hours,
    ...columns,
  );
  grid.style.setProperty('--days', String(days.length));
  grid.style.setProperty('--hours', String(span / 60));

  const list = h(
    'ul',
    { class: 'tt-list' },
    ...(t.items.length === 0
      ? [h('li', { class: 'meta' }, 'You hold no lecture in this term yet.')]
      : t.items.map((item) =>
          h(
            'li',
            {},
            h(
              'div',
              {},
              h('div', { class: 'lecture-title' }, item.courseCode ? h('span', { class: 'course-code' }, item.courseCode) : null, item.title), // prettier-ignore
              h('div', { class: 'meta' }, `${item.credits} credits · ${meetingsText(item.meetings)}${item.location ? ` · ${item.location}` : ''}`), // prettier-ignore
            ),
            h(
              'button',
              { type: 'button', class: 'secondary', 'data-testid': `drop-${item.lectureId}`, onclick: () => onDrop(item) }, // prettier-ignore
              'Drop',
            ),
          ),
        )),
  );
  const legend = h('p', { class: 'meta tt-legend' }, 'Outlined: planned, not held yet.');
  root.replaceChildren(
    h(
      'p',
      { class: 'meta' },
      `Term ${t.term} · `,
      h('strong', {}, `${t.credits} of ${t.maxCredits} credits`),
    ),
    grid,
    ...(wanted.length > 0 ? [legend] : []),
    list,
  );
}
