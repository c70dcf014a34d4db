import type { TermWindow } from './api.js';
import { h } from './dom.js';
import { toIso, toLocal } from './local-time.js';

/**
 * One registration window as the editor holds it: the form's text, and the window as the
 * service last answered it under that name (for its seeds, and its exact instants).
 */
export interface WindowRow {
  name: string;
  /** `datetime-local` values (with seconds) */
  opensAt: string;
  closesAt: string;
  /** space-separated lists, as in the records CSV */
  years: string;
  majors: string;
  groups: string;
  maxCredits: string;
}

/**
 * The fields of a row, with their labels and hints: first when the window is (and its cap),
 * then who it is for — two lines on a desktop, the times wide enough for their seconds.
 */
export const FIELDS: { key: keyof WindowRow; label: string; hint: string; who?: true }[] = [
  { key: 'name', label: 'Name', hint: 'letters, digits, _ . -' },
  { key: 'opensAt', label: 'Opens at', hint: 'your local time' },
  { key: 'closesAt', label: 'Closes at', hint: 'empty: never' },
  { key: 'maxCredits', label: 'Credit cap', hint: 'empty: none' },
  { key: 'years', label: 'Class years', hint: 'e.g. 3 4; empty: any', who: true },
  { key: 'majors', label: 'Majors', hint: 'e.g. CS MATH; empty: any', who: true },
  { key: 'groups', label: 'Groups', hint: 'e.g. honors; empty: any', who: true },
];

export function rowOf(w: TermWindow): WindowRow {
  return {
    name: w.name,
    opensAt: toLocal(w.opensAt, true),
    closesAt: toLocal(w.closesAt, true),
    years: (w.match.years ?? []).join(' '),
    majors: (w.match.majors ?? []).join(' '),
    groups: (w.match.groups ?? []).join(' '),
    maxCredits: w.maxCredits === null ? '' : String(w.maxCredits),
  };
}

export const emptyRow = (): WindowRow => ({ name: '', opensAt: '', closesAt: '', years: '', majors: '', groups: '', maxCredits: '' }); // prettier-ignore

const words = (text: string) => text.split(/[\s,]+/).filter(Boolean);

/**
 * A row as PUT /terms/:term/windows takes it. What is not well formed (a year that is no
 * number, a time left empty) is sent as typed: the service names the field and why, and its
 * message is shown beside it. An unchanged time is sent as the service answered it, to the
 * millisecond: the input shows seconds, and saving must not move an opening it did not touch.
 */
export function windowBody(row: WindowRow, saved: TermWindow | undefined): object {
  const instant = (local: string, was: string | null | undefined) =>
    was && local === toLocal(was, true) ? was : (toIso(local) ?? local);
  const years = words(row.years).map((y) => (/^\d+$/.test(y) ? Number(y) : y));
  const majors = words(row.majors);
  const groups = words(row.groups);
  const match = {
    ...(years.length > 0 ? { years } : {}),
    ...(majors.length > 0 ? { majors } : {}),
    ...(groups.length > 0 ? { groups } : {}),
  };
  const cap = row.maxCredits.trim();
  return {
    name: row.name.trim(),
    opensAt: instant(row.opensAt, saved?.opensAt),
    closesAt: row.closesAt ? instant(row.closesAt, saved?.closesAt) : null,
    match,
    maxCredits: cap === '' ? null : /^\d+$/.test(cap) ? Number(cap) : cap,
  };
}

export interface RowActions {
  edit(key: keyof WindowRow, value: string): void;
  move(by: -1 | 1): void;
  remove(): void;
}

/**
 * One window's fields, its buttons (up, down, remove) and its fairness seeds: the commitment
 * published from the start, the seed once it opens. `saved`: the window of that name the
 * service holds (a new name gets a new seed when saved).
 */
export function renderRow(
  row: WindowRow,
  i: number,
  count: number,
  saved: TermWindow | undefined,
  act: RowActions,
): HTMLElement {
  const id = (key: string) => `w${i}-${key}`;
  const field = ({ key, label, hint }: (typeof FIELDS)[number]) => {
    const type = key === 'opensAt' || key === 'closesAt' ? 'datetime-local' : key === 'maxCredits' ? 'number' : 'text'; // prettier-ignore
    const input = h('input', {
      id: id(key),
      name: key,
      type,
      step: type === 'datetime-local' ? '1' : undefined,
      min: key === 'maxCredits' ? '0' : undefined,
      max: key === 'maxCredits' ? '60' : undefined,
      inputmode: key === 'maxCredits' ? 'numeric' : undefined,
      maxlength: key === 'name' ? '32' : undefined,
      autocomplete: 'off',
      'aria-describedby': `${id(`${key}-hint`)} ${id(`${key}-error`)}`,
      oninput: (e) => act.edit(key, (e.target as HTMLInputElement).value),
    }) as HTMLInputElement;
    input.value = row[key];
    return h(
      'div',
      { class: 'field' },
      h('label', { for: id(key) }, label),
      input,
      h('p', { class: 'hint', id: id(`${key}-hint`) }, hint),
      h('p', { class: 'field-error', id: id(`${key}-error`), 'data-field': key, hidden: true }),
    );
  };
  const aria = buttonLabels(row, i);
  const button = (text: string, what: keyof typeof aria, onclick: () => void, disabled = false) =>
    h('button', { type: 'button', class: 'secondary small', 'aria-label': aria[what], 'data-testid': `window-${i}-${what}`, disabled, onclick }, text); // prettier-ignore
  return h(
    'li',
    { class: 'window-row', 'data-testid': `window-${i}` },
    h(
      'fieldset',
      {},
      h('legend', {}, `Window ${i + 1}`),
      h('div', { class: 'window-fields when' }, ...FIELDS.filter((f) => !f.who).map(field)),
      h('div', { class: 'window-fields who' }, ...FIELDS.filter((f) => f.who).map(field)),
      h('p', { class: 'meta seeds', 'data-testid': `window-${i}-seeds` }, ...seedsText(saved)),
      h(
        'div',
        { class: 'row-actions' },
        button('↑ Up', 'up', () => act.move(-1), i === 0),
        button('↓ Down', 'down', () => act.move(1), i === count - 1),
        button('Remove', 'remove', act.remove),
      ),
    ),
  );
}

/** What a screen reader says of a row's buttons: which window each one moves or removes. */
function buttonLabels(row: WindowRow, i: number): Record<'up' | 'down' | 'remove', string> {
  const name = row.name.trim() || `window ${i + 1}`;
  return { up: `Move ${name} up`, down: `Move ${name} down`, remove: `Remove ${name}` };
}

/**
 * A row renamed as it is typed (the row is not drawn again under the typing): its buttons say
 * the new name, and its seeds are those of the window of that name — a new name is a new
 * window to the service, with a new seed.
 */
export function renamed(
  li: HTMLElement,
  row: WindowRow,
  i: number,
  saved: TermWindow | undefined,
): void {
  for (const [what, label] of Object.entries(buttonLabels(row, i))) {
    li.querySelector(`[data-testid="window-${i}-${what}"]`)?.setAttribute('aria-label', label);
  }
  li.querySelector(`[data-testid="window-${i}-seeds"]`)?.replaceChildren(...seedsText(saved));
}

/** The window's draw is checkable: its seed's SHA-256 from the start, the seed once it opens. */
function seedsText(saved: TermWindow | undefined): (Node | string)[] {
  if (!saved) {
    return ['Its fairness seed is made when you save (a window keeps its seed while its name stays).']; // prettier-ignore
  }
  return [
    'Seed commitment (SHA-256): ',
    h('code', {}, saved.seedCommitment),
    h('br'),
    'Seed: ',
    saved.seed ? h('code', {}, saved.seed) : 'published once the window opens',
  ];
}
