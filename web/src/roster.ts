import { RosterItem, call, fetchCsv } from './api.js';
import { h } from './dom.js';
import { showError } from './error-banner.js';
import { when } from './format.js';

/** A lecture's roster in its live panel: who holds a seat, in enroll order, and a CSV of it. */
export async function rosterPanel(
  token: string,
  lectureId: number,
  title: string,
): Promise<HTMLElement> {
  const panel = h('section', { class: 'roster', 'data-testid': `roster-${lectureId}` });
  try {
    const { items } = await call<{ items: RosterItem[] }>(token, 'GET', `/lectures/${lectureId}/roster`); // prettier-ignore
    const download = h('button', { type: 'button', class: 'secondary', onclick: () => void downloadCsv(token, lectureId, title) }, 'Download CSV'); // prettier-ignore
    panel.append(
      h('h3', {}, `Roster: ${items.length} student${items.length === 1 ? '' : 's'} `, download),
      items.length === 0
        ? h('p', { class: 'meta' }, 'Nobody holds a seat yet.')
        : h(
            'table',
            {},
            h('thead', {}, h('tr', {}, h('th', {}, 'student'), h('th', {}, 'enrolled'), h('th', { class: 'num' }, 'queue #'))), // prettier-ignore
            h('tbody', {}, ...items.map((i) => h('tr', {}, h('td', {}, i.studentId), h('td', {}, when(i.enrolledAt)), h('td', { class: 'num' }, i.queueSeq === null ? '–' : String(i.queueSeq))))), // prettier-ignore
          ),
    );
  } catch (e) {
    showError(e);
  }
  return panel;
}

/** The bearer token goes in a header, never a URL: fetched, then saved from a blob. */
async function downloadCsv(token: string, lectureId: number, title: string): Promise<void> {
  try {
    const csv = await fetchCsv(token, `/lectures/${lectureId}/roster`);
    const url = URL.createObjectURL(new Blob([csv], { type: 'text/csv' }));
    const a = h('a', { href: url, download: `roster-${lectureId}-${title.replace(/\W+/g, '-')}.csv` }); // prettier-ignore
    a.click();
    setTimeout(() => URL.revokeObjectURL(url), 1000);
  } catch (e) {
    showError(e);
  }
}
