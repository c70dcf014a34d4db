import { ApiError, call } from './api.js';
import { $ } from './dom.js';
import { clearError, showError } from './error-banner.js';

/**
 * The credit-limits form: a term's limit (PUT /terms/:term), or one student's own in the term
 * (PUT /terms/:term/students/:id — an approved overload or a reduced load), and removing that
 * own limit. A limit applies to enrolls from then on and drops nobody.
 */
export function wireCreditLimits(form: HTMLFormElement, token: () => string): void {
  const value = (name: string) => (form.elements.namedItem(name) as HTMLInputElement).value.trim();
  const status = $('#limit-status');
  const path = () => {
    const term = encodeURIComponent(value('term'));
    const student = value('student');
    return student ? `/terms/${term}/students/${encodeURIComponent(student)}` : `/terms/${term}`;
  };
  const run = async (work: () => Promise<string>) => {
    clearError();
    status.textContent = '';
    if (!value('term')) return void showError(new ApiError(400, 'VALIDATION_FAILED', 'Name the term first.')); // prettier-ignore
    try {
      status.textContent = await work();
    } catch (e) {
      showError(e);
    }
  };
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    void run(async () => {
      const raw = value('maxCredits');
      const maxCredits = raw === '' ? Number.NaN : Number(raw);
      const res = await call<{ term: string; maxCredits: number; studentId?: string }>(
        token(),
        'PUT',
        path(),
        { maxCredits: Number.isNaN(maxCredits) ? raw : maxCredits },
      );
      return res.studentId
        ? `${res.studentId} may hold ${res.maxCredits} credits in ${res.term}.`
        : `Students may hold ${res.maxCredits} credits in ${res.term}.`;
    });
  });
  $('#limit-clear').addEventListener('click', () => {
    void run(async () => {
      if (!value('student')) throw new ApiError(400, 'VALIDATION_FAILED', 'Name the student whose own limit to remove.'); // prettier-ignore
      await call(token(), 'DELETE', path());
      const term = await call<{ maxCredits: number }>(token(), 'GET', `/terms/${encodeURIComponent(value('term'))}`); // prettier-ignore
      return `${value('student')} has the term's limit again: ${term.maxCredits} credits.`;
    });
  });
}
