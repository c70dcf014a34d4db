import { ApiError, ImportError, sendCsv } from './api.js';
import { $, h } from './dom.js';
import { clearError, showError } from './error-banner.js';

/** What differs between one import of a term's CSV and another (the catalog, students' records). */
export interface CsvImportKind<R> {
  /**
   * names the form's Import button (`#<name>-import`) and its report (`#<name>-report`), and
   * prefixes the report's test ids: `<name>-summary`, `<name>-refused`, `<name>-errors`
   */
  name: string;
  /** the route that takes a term's CSV (PUT, `?dryRun=true` to check it) */
  path(term: string): string;
  /** the answer's counts in words ("3 new, 1 changed, …"): what a dry run would do, or the import did */
  counts(report: R, term: string): string;
  /** the column that names each refused row: a section's ref, a student */
  key: { title: string; of(e: ImportError): string | null | undefined };
}

/**
 * A registrar's CSV for a term, checked first (a dry run: what it would do, or every row in
 * error), then imported — all or nothing. The Import button stays off until the file and term
 * as they are now have been checked, and imports exactly the text that was checked.
 */
export function wireCsvImport<R>(
  form: HTMLFormElement,
  kind: CsvImportKind<R>,
  token: () => string,
  imported: () => void = () => undefined,
): void {
  const importButton = $(`#${kind.name}-import`) as HTMLButtonElement;
  const report = $(`#${kind.name}-report`);
  const term = form.elements.namedItem('term') as HTMLInputElement;
  const file = form.elements.namedItem('file') as HTMLInputElement;
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
    const path = `${kind.path(name)}${dryRun ? '?dryRun=true' : ''}`;
    try {
      const answer = await sendCsv<R>(token(), 'PUT', path, csv);
      report.replaceChildren(
        h(
          'p',
          { class: dryRun ? 'meta' : 'confirmation', 'data-testid': `${kind.name}-summary` },
          dryRun ? `The file is valid. Importing it would make ${kind.counts(answer, name)}` : `Imported: ${kind.counts(answer, name)}`, // prettier-ignore
        ),
      );
      checked = dryRun ? { term: name, csv } : null;
      importButton.disabled = !dryRun;
      if (!dryRun) imported();
    } catch (e) {
      invalidate();
      if (e instanceof ApiError && e.errors.length > 0)
        report.replaceChildren(...refusal(e, kind)); // prettier-ignore
      else showError(e);
    }
  };
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    void send(true);
  });
  importButton.addEventListener('click', () => void send(false));
}

/** Every refused row: its number, what it names, the field and why. */
function refusal<R>(e: ApiError, kind: CsvImportKind<R>): HTMLElement[] {
  return [
    h('p', { class: 'error-text', 'data-testid': `${kind.name}-refused` }, `${e.message}. Correct these rows and check again:`), // prettier-ignore
    h(
      'table',
      { class: 'errors', 'data-testid': `${kind.name}-errors` },
      h('thead', {}, h('tr', {}, ...['row', kind.key.title, 'field', 'why'].map((c) => h('th', {}, c)))), // prettier-ignore
      h(
        'tbody',
        {},
        ...e.errors.map(
          (x) =>
          h('tr', {}, h('td', { class: 'num' }, String(x.row)), h('td', {}, kind.key.of(x) ?? '–'), h('td', {}, x.field ?? '–'), h('td', {}, `${x.message}${x.code === 'VALIDATION_FAILED' ? '' : ` (${x.code})`}`)), // prettier-ignore
        ),
      ),
    ),
  ];
}
