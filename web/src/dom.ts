type Attrs = Record<string, string | boolean | undefined | ((e: Event) => void)>;

/** A small element builder: attributes (`on…` are listeners), then children. */
export function h(
  tag: string,
  attrs: Attrs = {},
  ...children: (Node | string | null)[]
): HTMLElement {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === false) continue;
    if (typeof v === 'function') el.addEventListener(k.slice(2), v);
    else el.setAttribute(k, v === true ? '' : v);
  }
  for (const c of children) if (c !== null) el.append(c);
  return el;
}

export function $(selector: string): HTMLElement {
  return document.querySelector(selector) as HTMLElement;
}

/**
 * Draws `root` again — unless it would show just what it shows. The panels are drawn anew on
 * every status the stream sends and every section read: replacing the same buttons under the
 * pointer loses a click (pressed on one button, released on its copy), and moving a student
 * choosing among radios out of them. `draw` fills a bare copy of `root`; when that differs, its
 * children replace `root`'s, and the focus goes back to the radio of the same group and value,
 * or the element with the same test id.
 */
export function redraw(root: HTMLElement, draw: (into: HTMLElement) => void): void {
  const fresh = root.cloneNode(false) as HTMLElement;
  draw(fresh);
  if (fresh.innerHTML === root.innerHTML && fresh.hidden === root.hidden) return;
  const was = document.activeElement;
  let again: string | null = null;
  if (was instanceof HTMLInputElement && was.name && root.contains(was)) {
    again = `input[name="${CSS.escape(was.name)}"][value="${CSS.escape(was.value)}"]`;
  } else if (was instanceof HTMLElement && root.contains(was) && was.dataset.testid) {
    again = `[data-testid="${CSS.escape(was.dataset.testid)}"]`;
  }
  root.replaceChildren(...fresh.childNodes);
  root.hidden = fresh.hidden;
  if (again) root.querySelector<HTMLElement>(again)?.focus();
}
