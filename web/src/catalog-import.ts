import { ApiError, ImportReport, sendCsv } from './api.js';
import { $, h } from './dom.js';
import { clearError, showError } from './error-banner.js';

/**
 * The catalog form: a registrar's CSV for a term, checked first (a dry run: what it would
 * create, change and leave, or every row in error), then imported — all or nothing. The Import
 * button stays off until the file and term as they are now have been checked.
 */
export function wireCatalogImport(
  form: HTMLFormElement,
  token: () => string,
  imported: () => void,
): void {
  const term = form.elements.namedItem('term') as HTMLInputElement;
  const file = form.elements.namedItem('file') as HTMLInputElement;
  const importButton = $('#catalog-import') as HTMLButtonElement;
  const report = $('#catalog-report');
  let checked: { term: string; csv: string } | null = null;
  const invalidate = () => {
    checked = null;
    importButton.disabled = true;
  };
  term.addEventListener('input', invalidate);
  file.addEventListener('change', invalidate);

  const send = async (dryRun: boolean): Promise<void> => {
    clearError();
    report.replaceChildren();
    const name = term.value.trim();
    const chosen = file.files?.[0];
    if (!name || !chosen) return void showError(new ApiError(400, 'VALIDATION_FAILED', 'Name the term and choose a CSV file first.')); // prettier-ignore
    const csv = dryRun ? await chosen.text() : (checked?.csv ?? '');
    const path = `/terms/${encodeURIComponent(name)}/catalog${dryRun ? '?dryRun=true' : ''}`;
    try {
      const answer = await sendCsv<ImportReport>(token(), 'PUT', path, csv);
      report.replaceChildren(summary(answer, dryRun, name));
      checked = dryRun ? { term: name, csv } : null;
      importButton.disabled = !dryRun;
      if (!dryRun) imported();
    } catch (e) {
      invalidate();
      if (e instanceof ApiError && e.errors.length > 0) report.replaceChildren(...refusal(e));
      else showError(e);
    }
  };
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    void send(true);
  });
  importButton.addEventListener('click', () => void send(false));
}

function summary(r: ImportReport, dryRun: boolean, term: string): HTMLElement {
  const counts = `${r.created} new, ${r.updated} changed, ${r.unchanged} unchanged; ${r.absent} of ${term} not in the file (left as they are).`; // prettier-ignore
  return h(
    'p',
    { class: dryRun ? 'meta' : 'confirmation', 'data-testid': 'catalog-summary' },
    dryRun ? `The file is valid. Importing it would make ${counts}` : `Imported: ${counts}`,
  );
}

function refusal(e: ApiError): HTMLElement[] {
  return [
    h('p', { class: 'error-text', 'data-testid': 'catalog-refused' }, `${e.message}. Correct these rows and check again:`), // prettier-ignore
    h(
      'table',
      { class: 'errors', 'data-testid': 'catalog-errors' },
      h('thead', {}, h('tr', {}, ...['row', 'ref', 'field', 'why'].map((c) => h('th', {}, c)))),
      h(
        'tbody',
        {},
        ...e.errors.map(
          (x) =>
          h('tr', {}, h('td', { class: 'num' }, String(x.row)), h('td', {}, x.ref ?? '–'), h('td', {}, x.field ?? '–'), h('td', {}, `${x.message}${x.code === 'VALIDATION_FAILED' ? '' : ` (${x.code})`}`)), // prettier-ignore
        ),
      ),
    ),
  ];
}
