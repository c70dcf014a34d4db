/**
 * `datetime-local` inputs hold local time without a zone — as the admin means it; the service
 * takes and answers ISO 8601 instants.
 */
export function toIso(local: string): string | undefined {
  return local ? new Date(local).toISOString() : undefined;
}

/** An instant as a `datetime-local` value; `seconds` for an input with `step="1"`. */
export function toLocal(iso: string | null, seconds = false): string {
  if (!iso) return '';
  const d = new Date(iso);
  const pad = (n: number) => String(n).padStart(2, '0');
  const minutes = `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`; // prettier-ignore
  return seconds ? `${minutes}:${pad(d.getSeconds())}` : minutes;
}
