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
