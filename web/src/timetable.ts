import type { Lecture, Meeting, Timetable, TimetableItem } from './api.js';
import { h } from './dom.js';
import { DAY_NAMES, meetingDates, meetingsText } from './format.js';
import { minutes, sameSlot } from './meetings.js';
import { Lectures, componentWord, heldName } from './sections.js';

const WEEK = Object.keys(DAY_NAMES);

export interface TimetableActions {
  drop(item: TimetableItem): void;
  /** open a held lecture's panel, where the sections held with it are changed */
  sections(primaryId: number): void;
}

/** What a block shows of the lecture or section it draws. */
interface Drawn {
  lectureId: number;
  title: string;
  courseCode: string | null;
  location: string | null;
  /** a section's component (LAB, DIS, …): a section's block is labelled with it */
  component?: string;
}

/**
 * The week as a picture: days across (Monday to Friday, and the weekend when something meets
 * then), hours down, one block per meeting of each held lecture and section, placed and sized
 * by its time; a section's block carries its component, so the lab is told from the lecture.
 * Meetings at one hour that are held in different weeks (two half-term courses) stand side by
 * side, each with its dates, rather than one on top of the other — on a phone (`narrow`), where
 * two such blocks would be too thin to read, as one block listing each with its dates.
 * Lectures without meetings are
 * listed under it. Each held lecture can be dropped from here, its sections with it. Planned
 * lectures not held yet (and the sections chosen for them) are drawn apart: outlined, in the
 * right half of their slot.
 */
export function renderTimetable(
  root: HTMLElement,
  t: Timetable,
  act: TimetableActions,
  planned: Lecture[] = [],
  lectures: Lectures = new Map(),
  narrow = false,
): void {
  const wanted = planned.filter((l) => !t.items.some((i) => i.lectureId === l.id));
  const sectionOf = (id: number, secondary: boolean) =>
    secondary ? (lectures.get(id)?.component ?? 'section') : undefined;
  const meetings = [
    ...t.items.flatMap((item) =>
      item.meetings.map((m) => ({
        item: { ...item, component: sectionOf(item.lectureId, item.primaryId !== undefined) } as Drawn, // prettier-ignore
        m,
        plan: false,
      })),
    ),
    ...wanted.flatMap((l) =>
      l.meetings.map((m) => ({
        item: { lectureId: l.id, title: l.title, courseCode: l.courseCode, location: l.location, component: sectionOf(l.id, l.primaryIds.length > 0) } as Drawn, // prettier-ignore
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
  // A day with meetings side by side is as many columns wide as it has lanes (up to three): each
  // block as wide as any other day's, so its code, time and dates stay as legible. On a phone,
  // where every other day would grow too narrow for its codes, it is half as wide again as the
  // others (two grid columns each, three for it), for its one block listing them.
  const laned = days.map((day) =>
    lanes(meetings.filter((x) => x.m.day === day && !x.plan).map((x) => x.m)),
  );
  const spans = laned.map((lane) => {
    const most = Math.min(3, Math.max(1, ...[...lane.values()].map((p) => p.of)));
    return narrow ? (most > 1 ? 3 : 2) : most;
  });
  const columns = days.map((day, d) => {
    const col = h('div', { class: 'tt-day', role: 'group', 'aria-label': DAY_NAMES[day] });
    col.style.gridColumn = `span ${spans[d]}`;
    // The earlier weeks first: in a block listing two half-term courses, the first half on top.
    const today = meetings
      .filter((x) => x.m.day === day)
      .sort((a, b) => (a.m.from ?? '').localeCompare(b.m.from ?? ''));
    const lane = laned[d];
    const shared = new Map<number, HTMLElement>(); // on a phone: each group's one block
    for (const { item, m, plan } of today) {
      const dates = meetingDates(m);
      const place = plan ? undefined : lane.get(m);
      if (narrow && place && place.of > 1) {
        let box = shared.get(place.group);
        if (!box) {
          box = h('div', { class: 'tt-block' });
          box.style.padding = '0.15rem 0.15rem 0.15rem 0.2rem'; // a little more room for the codes
          box.style.top = `${((place.start - from) / span) * 100}%`;
          box.style.height = `${((place.end - place.start) / span) * 100}%`;
          shared.set(place.group, box);
          col.append(box);
        }
        const entry = h(
          'div',
          { 'data-testid': `timetable-${item.lectureId}`, title: [item.title, `${m.start}–${m.end}`, dates].filter(Boolean).join(' · ') }, // prettier-ignore
          h('strong', {}, drawnName(item)),
          dates ? h('span', { class: 'tt-time tt-dates' }, compact(dates)) : null,
        );
        entry.style.display = 'flex';
        entry.style.flexDirection = 'column';
        if (box.childElementCount > 0) {
          entry.style.borderTop = '1px solid #9fb4e0'; // seen on the block's blue
          entry.style.marginTop = entry.style.paddingTop = '2px';
        }
        box.append(entry);
        continue;
      }
      const name = drawnName(item);
      const block = h(
        'div',
        {
          class: plan ? 'tt-block planned' : 'tt-block',
          'data-testid': plan ? `planned-${item.lectureId}` : `timetable-${item.lectureId}`,
          title: [item.component ? `${item.title} (${componentWord(item.component)})` : item.title, `${m.start}–${m.end}`, dates, item.location].filter(Boolean).join(' · '), // prettier-ignore
        },
        h('strong', {}, name),
        item.courseCode ? oneLine(h('span', {}, item.title)) : null,
        h('span', { class: 'tt-time' }, `${m.start}–${m.end}`),
        // Kept on a phone too (tt-time is not hidden there): it is what sets two blocks apart.
        dates ? h('span', { class: 'tt-time tt-dates' }, compact(dates)) : null,
        item.location ? h('span', {}, item.location) : null,
      );
      // Properties, not a style attribute: the page's CSP allows them.
      block.style.top = `${((minutes(m.start) - from) / span) * 100}%`;
      block.style.height = `${((minutes(m.end) - minutes(m.start)) / span) * 100}%`;
      if (place && place.of > 1) {
        block.style.left = `calc(${(place.lane / place.of) * 100}% + 2px)`;
        block.style.right = `calc(${((place.of - place.lane - 1) / place.of) * 100}% + 2px)`;
      }
      col.append(block);
    }
    return col;
  });
  const grid = h(
    'div',
    { class: 'tt-grid' },
    h('div', { class: 'tt-corner' }),
    ...days.map((d, i) => {
      const head = h('div', { class: 'tt-head' }, DAY_NAMES[d]);
      head.style.gridColumn = `span ${spans[i]}`;
      return head;
    }),
    hours,
    ...columns,
  );
  grid.style.setProperty('--days', String(spans.reduce((a, b) => a + b, 0)));
  grid.style.setProperty('--hours', String(span / 60));

  const primaries = t.items.filter(
    (i) => i.primaryId === undefined || !t.items.some((p) => p.lectureId === i.primaryId),
  );
  const list = h(
    'ul',
    { class: 'tt-list' },
    ...(t.items.length === 0
      ? [h('li', { class: 'meta' }, 'You hold no lecture in this term yet.')]
      : primaries.map((item) => heldRow(item, t, act, lectures))),
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

/** "11 Jan–5 Mar", wrapping after the dash only: a narrow block never splits "5 Mar". */
const compact = (dates: string) => dates.replace(' – ', '–').replace(/(\d+) (\w+)/g, '$1\u00a0$2');

/**
 * A title kept to one line, cut short with "…" (whole in the tooltip and the list below): a
 * title wrapping in a narrow column would push the time and place out of a short block.
 */
function oneLine(el: HTMLElement): HTMLElement {
  Object.assign(el.style, { whiteSpace: 'nowrap', overflow: 'hidden', textOverflow: 'ellipsis' });
  return el;
}

/** "CS225", a section's "CS225 LAB": the first line of its block. */
const drawnName = (d: Drawn) => {
  const name = d.courseCode ?? d.title;
  return d.component ? `${name} ${d.component}` : name;
};

/** A held lecture under the week: its facts, the sections held with it, Drop (and Change). */
function heldRow(
  item: TimetableItem,
  t: Timetable,
  act: TimetableActions,
  lectures: Lectures,
): HTMLElement {
  const sections = t.items.filter((s) => s.primaryId === item.lectureId);
  const secondary = item.primaryId !== undefined; // its lecture is not held: shown as it is
  return h(
    'li',
    {},
    h(
      'div',
      {},
      h('div', { class: 'lecture-title' }, item.courseCode ? h('span', { class: 'course-code' }, secondary ? heldName(item, lectures) : item.courseCode) : null, item.title), // prettier-ignore
      h('div', { class: 'meta' }, `${item.credits} credits · ${meetingsText(item.meetings)}${item.location ? ` · ${item.location}` : ''}`), // prettier-ignore
      ...sections.map((s) => {
        const component = lectures.get(s.lectureId)?.component;
        return h(
          'div',
          { class: 'meta', 'data-testid': `held-section-${s.lectureId}` },
          h('strong', {}, `with ${component ? componentWord(component) : 'section'}: `),
          `${meetingsText(s.meetings)}${s.location ? ` · ${s.location}` : ''}`,
        );
      }),
      sections.length > 0
        ? h('button', { type: 'button', class: 'link', 'data-testid': `change-${item.lectureId}`, onclick: () => act.sections(item.lectureId) }, 'Change sections') // prettier-ignore
        : null,
    ),
    // Drop gives up the lecture and its sections together; a section alone is not dropped.
    secondary
      ? null
      : h('button', { type: 'button', class: 'secondary', 'data-testid': `drop-${item.lectureId}`, onclick: () => act.drop(item) }, 'Drop'), // prettier-ignore
  );
}

/** Where a held meeting goes in its day: its lane, of how many, in which group of meetings. */
interface Place {
  lane: number;
  of: number;
  /** the meetings sharing time with each other, one after another: their first start, last end */
  group: number;
  start: number;
  end: number;
}

/**
 * Side by side: each meeting of a day's held blocks gets a lane, and the number of lanes of
 * the meetings it shares its time with. Held meetings at one time never clash (the service
 * refuses that), so they are held in different weeks: each gets its share of the column.
 */
function lanes(meetings: Meeting[]): Map<Meeting, Place> {
  const out = new Map<Meeting, Place>();
  const sorted = [...meetings].sort((a, b) => minutes(a.start) - minutes(b.start) || minutes(a.end) - minutes(b.end)); // prettier-ignore
  let group: Meeting[] = [];
  let ends: number[] = []; // each lane's last end, in this group
  let groups = 0;
  const close = () => {
    const start = Math.min(...group.map((m) => minutes(m.start)));
    const end = Math.max(...ends);
    for (const m of group) Object.assign(out.get(m)!, { of: ends.length, start, end });
    group = [];
    ends = [];
    groups++;
  };
  for (const m of sorted) {
    if (group.length > 0 && !group.some((g) => sameSlot(g, m))) close();
    let lane = ends.findIndex((end) => end <= minutes(m.start));
    if (lane < 0) lane = ends.push(0) - 1;
    ends[lane] = minutes(m.end);
    out.set(m, { lane, of: 0, group: groups, start: 0, end: 0 });
    group.push(m);
  }
  if (group.length > 0) close();
  return out;
}
