/**
 * How the section choice looks. Set as style properties — which the page's CSP allows, unlike
 * style attributes or a <style> element — because web/styles.css is not part of this change:
 * these are its rules to be, one object per class (`.section-option` …), and move there as they
 * are.
 */
type Look = Partial<Record<keyof CSSStyleDeclaration, string>>;

export const LOOK = {
  /** `.sections`: the choice, under the lecture's status */
  choice: { display: 'grid', gap: '0.75rem', margin: '0.75rem 0' },
  /** `.sections fieldset`: one component's sections */
  component: { border: '0', padding: '0', margin: '0', minWidth: '0', display: 'grid', gap: '0.4rem' }, // prettier-ignore
  legend: { fontWeight: '700', padding: '0', marginBottom: '0.4rem' },
  /** `.section-option`: one section, a radio and what it is */
  option: {
    display: 'flex',
    alignItems: 'flex-start',
    gap: '0.6rem',
    margin: '0',
    padding: '0.55rem 0.7rem',
    border: '1px solid var(--line)',
    borderRadius: '0.5rem',
    fontWeight: '400',
    cursor: 'pointer',
  },
  /** `.section-option.chosen` */
  chosen: { borderColor: 'var(--accent)', background: '#eef3fd', boxShadow: 'inset 0 0 0 1px var(--accent)' }, // prettier-ignore
  /** `.section-option.unavailable`: no seat left — greyed, not choosable */
  unavailable: { cursor: 'not-allowed', background: '#f3f4f6', color: 'var(--muted)' },
  radio: { flex: 'none', width: '1.15rem', height: '1.15rem', margin: '0.1rem 0 0', accentColor: 'var(--accent)' }, // prettier-ignore
  /** `.section-option .what`: the meetings, then place, seats and marks, wrapping on a phone */
  what: { display: 'flex', flexWrap: 'wrap', alignItems: 'center', gap: '0.25rem 0.5rem', minWidth: '0' }, // prettier-ignore
  /** `.badge.clash`: would meet at the time of something held */
  clash: { background: '#fff4e0', color: 'var(--warn)' },
  /** `.sections .prompt`: what is still to be chosen, after Enroll was pressed */
  prompt: { margin: '0', color: 'var(--bad)', fontWeight: '600' },
} satisfies Record<string, Look>;

/** Applies a look to an element (and returns it, to be used inline where it is built). */
export function styled<E extends HTMLElement>(el: E, ...looks: Look[]): E {
  for (const look of looks) Object.assign(el.style, look);
  return el;
}
