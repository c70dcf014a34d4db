import { ApiError, TermWindow, TermWindows, call } from './api.js';
import { say, sayError } from './card-status.js';
import { FIELDS, WindowRow, emptyRow, renamed, renderRow, rowOf, windowBody } from './window-rows.js'; // prettier-ignore

/**
 * The registration windows card: a term's windows loaded (GET /terms/:term/windows), edited as
 * a form — one fieldset per window, added, removed and moved (the order is the order they are
 * judged in: the first open one that matches a student is in force) — and saved whole (PUT).
 * The service validates; each of its messages is shown beside the field it names.
 */
export function wireWindowsEditor(root: HTMLElement, token: () => string): void {
  const load = root.querySelector('#windows-load') as HTMLFormElement;
  const form = root.querySelector('#windows-form') as HTMLFormElement;
  const list = root.querySelector('#window-rows') as HTMLElement;
  const status = root.querySelector('#windows-status') as HTMLElement;
  const termInput = load.elements.namedItem('term') as HTMLInputElement;
  /** the term being edited: saving goes to it, whatever the term field says meanwhile */
  let term = '';
  let rows: WindowRow[] = [];
  /** the windows as the service last answered them, by name */
  let saved = new Map<string, TermWindow>();

  const draw = (...focus: string[]) => {
    list.replaceChildren(
      ...rows.map((row, i) =>
        renderRow(row, i, rows.length, saved.get(row.name.trim()), {
          edit: (key, value) => {
            row[key] = value;
            say(status, 'Unsaved changes.');
            const li = list.querySelector<HTMLElement>(`[data-testid="window-${i}"]`);
            if (key === 'name' && li) renamed(li, row, i, saved.get(value.trim()));
          },
          move: (by) => {
            [rows[i], rows[i + by]] = [rows[i + by], rows[i]];
            // The same button of the row moved — or the other way, once it is at the end.
            changed(`window-${i + by}-${by < 0 ? 'up' : 'down'}`, `window-${i + by}-${by < 0 ? 'down' : 'up'}`); // prettier-ignore
          },
          remove: () => {
            rows.splice(i, 1);
            changed(rows.length > 0 ? `window-${Math.min(i, rows.length - 1)}-remove` : 'window-add'); // prettier-ignore
          },
        }),
      ),
    );
    root.querySelector('#windows-empty')!.toggleAttribute('hidden', rows.length > 0);
    // The button pressed moved with its row (or went with it): the focus follows.
    const next = focus.map((f) => root.querySelector<HTMLElement>(`[data-testid="${f}"]:not(:disabled)`)); // prettier-ignore
    next.find((el) => el !== null)?.focus();
  };
  const changed = (...focus: string[]) => {
    say(status, 'Unsaved changes.');
    draw(...focus);
  };

  const shown = (answer: TermWindows) => {
    term = answer.term;
    saved = new Map(answer.windows.map((w) => [w.name, w]));
    rows = answer.windows.map(rowOf);
    root.querySelector('#windows-term')!.textContent = term;
    form.hidden = false;
    draw();
  };

  load.addEventListener('submit', (e) => {
    e.preventDefault();
    const name = termInput.value.trim();
    say(status, '');
    void (async () => {
      try {
        if (!name) throw new ApiError(400, 'VALIDATION_FAILED', 'Name the term first.');
        shown(await call<TermWindows>(token(), 'GET', `/terms/${encodeURIComponent(name)}/windows`)); // prettier-ignore
        say(status, rows.length === 0 ? '' : `${count(rows.length)} of ${term}, in the order they are judged.`); // prettier-ignore
      } catch (err) {
        sayError(status, err);
      }
    })();
  });
  root.querySelector('#window-add')!.addEventListener('click', () => {
    rows.push(emptyRow());
    changed();
    list.querySelector<HTMLElement>(`#w${rows.length - 1}-name`)?.focus();
  });
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    void save();
  });

  const save = async (): Promise<void> => {
    clearFieldErrors(list);
    say(status, 'Saving…');
    const windows = rows.map((r) => windowBody(r, saved.get(r.name.trim())));
    try {
      shown(await call<TermWindows>(token(), 'PUT', `/terms/${encodeURIComponent(term)}/windows`, { windows })); // prettier-ignore
      say(status, `Saved: ${count(rows.length)} of ${term}. Joins follow within a second; nobody is dropped from a queue or a seat.`); // prettier-ignore
    } catch (err) {
      if (!(err instanceof ApiError && err.code === 'VALIDATION_FAILED')) return sayError(status, err); // prettier-ignore
      const { marked, rest } = showFieldErrors(list, err.message);
      const why = [...rest, ...(marked ? ['correct the fields marked below'] : [])];
      say(status, `Not saved: ${why.join('; ')}.`, true);
    }
  };
}

const count = (n: number) => `${n} window${n === 1 ? '' : 's'}`;

function clearFieldErrors(list: HTMLElement): void {
  for (const el of list.querySelectorAll<HTMLElement>('.field-error')) {
    el.textContent = '';
    el.hidden = true;
  }
  for (const el of list.querySelectorAll('[aria-invalid]')) el.removeAttribute('aria-invalid');
}

/**
 * Puts each of the service's messages ("windows.1.match.years must …; windows.2.closesAt must
 * be after opensAt") beside the field it names, worded with the field's label ("Class years
 * must …"); returns how many it placed, and those that name no field of a row (a name given
 * twice), for the card's status line.
 */
function showFieldErrors(list: HTMLElement, message: string): { marked: number; rest: string[] } {
  const rest: string[] = [];
  let marked = 0;
  let first: HTMLElement | null = null;
  for (const part of message.split('; ')) {
    const m = /^windows\.(\d+)\.(?:match\.)?(\w+)(.*)$/.exec(part);
    const field = m && FIELDS.find((f) => f.key === m[2]);
    const box = field && list.querySelector<HTMLElement>(`#w${m[1]}-${field.key}-error`);
    if (!m || !field || !box) {
      rest.push(part);
      continue;
    }
    // "Closes at must be after opensAt"; a field's further messages follow its first.
    const said = m[3].replace(/^:?\s*/, '');
    box.textContent = box.hidden ? `${field.label}${m[3]}` : `${box.textContent}; ${said}`;
    box.hidden = false;
    const input = list.querySelector<HTMLElement>(`#w${m[1]}-${field.key}`);
    input?.setAttribute('aria-invalid', 'true');
    first ??= input;
    marked++;
  }
  first?.focus();
  return { marked, rest };
}
