import type { Lecture, Timetable } from './api.js';
import { h } from './dom.js';
import { meetingsText, seatsLeft } from './format.js';
import { LOOK, styled } from './look.js';
import { Lectures, clashesOf, componentWord, componentsOf, sectionsKnown } from './sections.js';

export interface ChoiceView {
  primary: Lecture;
  lectures: Lectures;
  /** the section of each component chosen now (SectionChoices.chosen) */
  chosen: Map<string, Lecture>;
  timetable?: Timetable;
  /** the sections held with the primary, when the student holds it: theirs, to change */
  held: number[];
  /** after Enroll was refused for it: what the student still has to choose, in words */
  prompt?: string;
  pick(section: Lecture): void;
}

/**
 * The choice of a primary's sections (`sections-<id>`): one group of radios per component, a
 * radio per section (`section-<id>`) with its meetings (and dates), place, seats left, and
 * marks — full (greyed and not choosable), clashing with something held, the student's own.
 * Radios rather than a select: every section's times and seats are in sight at once, so the
 * clash or the last seat is seen before it is chosen.
 */
export function renderSectionChoice(v: ChoiceView): HTMLElement {
  const { primary } = v;
  const mine = v.held.length > 0;
  const groups = componentsOf(primary, v.lectures);
  const words = groups.map(([c]) => `one ${componentWord(c)}`);
  const together = words.length > 1 ? `${words.slice(0, -1).join(', ')} and ${words.at(-1)}` : words[0]; // prettier-ignore
  const title = h('h3', { id: `sections-${primary.id}-title` }, mine ? 'Your sections' : 'Choose your sections'); // prettier-ignore
  title.style.margin = '0';
  title.style.fontSize = '1rem'; // under the panel's own heading (h2, 1.05rem)
  const intro = mine
    ? 'Choose another section below to change it; your seat in the old one is kept until the new one is yours.'
    : `${primary.courseCode ?? primary.title} is taken with ${together}. Choose one of each; Enroll takes them all together.`;
  return styled(
    h(
      'div',
      { class: 'sections', 'data-testid': `sections-${primary.id}`, role: 'group', 'aria-labelledby': title.id }, // prettier-ignore
      title,
      styled(h('p', { class: 'meta' }, sectionsKnown(primary, v.lectures) ? intro : 'Reading the sections…'), { margin: '0' }), // prettier-ignore
      v.prompt ? styled(h('p', { class: 'prompt', role: 'alert' }, v.prompt), LOOK.prompt) : null,
      ...groups.map(([component, sections]) => group(v, component, sections)),
    ),
    LOOK.choice,
  );
}

function group(v: ChoiceView, component: string, sections: Lecture[]): HTMLElement {
  const open = sections.some((s) => s.seatsLeft > 0 || v.held.includes(s.id));
  return styled(
    h(
      'fieldset',
      { class: 'section-component' },
      styled(h('legend', {}, `${componentWord(component)} (${component})`), LOOK.legend),
      ...sections.map((s) => option(v, s)),
      open ? null : h('p', { class: 'meta' }, `Every ${componentWord(component)} section is full for now.`), // prettier-ignore
    ),
    LOOK.component,
  );
}

function option(v: ChoiceView, s: Lecture): HTMLElement {
  const chosen = v.chosen.get(s.component)?.id === s.id;
  const held = v.held.includes(s.id);
  const full = s.seatsLeft === 0 && !held;
  const clashes = clashesOf(s, v.primary, v.chosen, v.timetable, v.lectures);
  const radio = styled(
    h('input', {
      type: 'radio',
      name: `sections-${v.primary.id}-${s.component}`,
      value: String(s.id),
      checked: chosen,
      // Never disabled while the panel waits for an answer: a pick changes nothing sent already,
      // and a disabled radio would lose the keyboard focus at every status the stream sends.
      disabled: full,
      onchange: () => v.pick(s),
    }),
    LOOK.radio,
  );
  const marks = [
    held ? h('span', { class: 'badge ENROLLED' }, 'Yours') : null,
    full ? h('span', { class: 'badge FULL' }, 'Full') : null,
    clashes.length > 0 ? styled(h('span', { class: 'badge clash' }, `Clashes with ${clashes.join(', ')}`), LOOK.clash) : null, // prettier-ignore
  ];
  // Place and seats in one piece: on a phone they wrap under the time together.
  const facts = [s.location, s.instructor, full ? 'no seat left' : seatsLeft(s.seatsLeft)].filter((x): x is string => !!x); // prettier-ignore
  return styled(
    h(
      'label',
      { class: 'section-option', 'data-testid': `section-${s.id}` },
      radio,
      styled(
        h(
          'span',
          { class: 'what' },
          h('strong', {}, `${s.component} · ${meetingsText(s.meetings)}`),
          h('span', { class: 'meta' }, facts.join(' · ')),
          ...marks,
        ),
        LOOK.what,
      ),
    ),
    LOOK.option,
    ...(chosen ? [LOOK.chosen] : []),
    ...(full ? [LOOK.unavailable] : []),
  );
}
