import { ApiError, Hold, call } from './api.js';
import { h } from './dom.js';
import { say, sayError } from './card-status.js';
import { when } from './format.js';

/**
 * The holds card: a student's holds (GET /students/:id/holds), placing one (PUT …/holds/:code
 * with the message the student will read) and lifting one (DELETE). A hold blocks the student's
 * joins and enrolls in every term until lifted. Placing and lifting act on the student whose
 * holds are shown — not on whatever the student field says meanwhile — so a hold never lands
 * on a student the registrar did not look at.
 */
export function wireHoldsEditor(root: HTMLElement, token: () => string): void {
  const find = root.querySelector('#holds-find') as HTMLFormElement;
  const place = root.querySelector('#holds-place') as HTMLFormElement;
  const list = root.querySelector('#holds-list') as HTMLElement;
  const status = root.querySelector('#holds-status') as HTMLElement;
  const field = (form: HTMLFormElement, name: string) =>
    form.elements.namedItem(name) as HTMLInputElement;
  let shown: string | null = null;

  const path = (student: string, code?: string) =>
    `/students/${encodeURIComponent(student)}/holds${code ? `/${encodeURIComponent(code)}` : ''}`;

  const show = async (student: string): Promise<void> => {
    const { items } = await call<{ items: Hold[] }>(token(), 'GET', path(student));
    shown = student;
    root.querySelector('#holds-of')!.textContent = student;
    list.replaceChildren(
      h('h3', {}, `Holds of ${student}`),
      items.length === 0
        ? h('p', { class: 'meta' }, `${student} has no hold: they may register as their windows allow.`) // prettier-ignore
        : h('ul', { class: 'hold-items' }, ...items.map((x) => item(x, () => void lift(x)))),
    );
    list.hidden = place.hidden = false;
  };

  const lift = (x: Hold) =>
    act(async () => {
      await call(token(), 'DELETE', path(x.studentId, x.code));
      await show(x.studentId);
      return `Lifted ${x.code} from ${x.studentId}.`;
    });

  /** Runs one action, its outcome said in the card's status line. */
  const act = async (work: () => Promise<string>): Promise<void> => {
    say(status, '');
    try {
      say(status, await work());
    } catch (e) {
      sayError(status, e);
    }
  };

  find.addEventListener('submit', (e) => {
    e.preventDefault();
    const student = field(find, 'student').value.trim();
    void act(async () => {
      if (!student) throw new ApiError(400, 'VALIDATION_FAILED', 'Name the student first.');
      await show(student);
      return '';
    });
  });
  // Another student typed: what is shown (and would be acted on) is no longer theirs.
  field(find, 'student').addEventListener('input', () => {
    shown = null;
    list.hidden = place.hidden = true;
  });
  place.addEventListener('submit', (e) => {
    e.preventDefault();
    const student = shown;
    if (!student) return;
    // Codes are upper case (`[A-Z0-9_]{1,32}`): "bursar" typed means BURSAR.
    const code = field(place, 'code').value.trim().toUpperCase();
    const message = field(place, 'message').value.trim();
    void act(async () => {
      if (!code) throw new ApiError(400, 'VALIDATION_FAILED', 'Give the hold a code, e.g. BURSAR.');
      await call<Hold>(token(), 'PUT', path(student, code), { message });
      place.reset();
      await show(student);
      return `Placed ${code} on ${student}: their joins and enrolls are refused until it is lifted.`;
    });
  });
}

/** One hold: its code, what the student reads, since when, and the button that lifts it. */
function item(x: Hold, lift: () => void): HTMLElement {
  return h(
    'li',
    {},
    h(
      'div',
      {},
      h('strong', {}, x.code),
      ` — ${x.message}`,
      h('div', { class: 'meta' }, `placed ${when(x.placedAt)}`),
    ),
    h(
      'button',
      { type: 'button', class: 'secondary', 'aria-label': `Lift ${x.code}`, onclick: lift },
      'Lift',
    ),
  );
}
