import type { Lecture } from './api.js';
import { h } from './dom.js';
import { duration, when } from './format.js';

/** Open and full lectures (join), and scheduled ones (with their opening time and a countdown). */
export function renderLectures(
  list: HTMLElement,
  lectures: Lecture[],
  onJoin: (l: Lecture) => void,
): void {
  if (lectures.length === 0) {
    list.replaceChildren(h('li', { class: 'meta' }, 'No lecture is open or scheduled right now.'));
    return;
  }
  list.replaceChildren(
    ...lectures.map((l) => {
      const opens =
        l.status === 'SCHEDULED'
          ? h(
              'span',
              { class: 'meta' },
              `opens ${when(l.opensAt)} · in `,
              h(
                'span',
                { class: 'countdown', 'data-opens': l.opensAt },
                duration(Date.parse(l.opensAt) - Date.now()),
              ),
            )
          : h('span', { class: 'meta' }, `${l.seatsLeft} of ${l.capacity} seats left`);
      return h(
        'li',
        {},
        h(
          'div',
          {},
          h('div', { class: 'lecture-title' }, l.title),
          h('span', { class: `badge ${l.status}` }, l.status),
          ' ',
          opens,
        ),
        h(
          'button',
          { type: 'button', 'data-testid': `join-${l.id}`, onclick: () => onJoin(l) },
          l.status === 'SCHEDULED' ? 'Open' : 'Join queue',
        ),
      );
    }),
  );
}
