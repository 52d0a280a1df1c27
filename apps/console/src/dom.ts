/** A tiny element builder: no framework, no innerHTML (nothing an API answers is ever parsed as HTML). */
export type Child = Node | string | number | null | undefined | false;
type Attrs = Record<string, string | number | boolean | undefined | EventListener>;

export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Attrs = {},
  ...children: (Child | Child[])[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === undefined || value === false) continue;
    if (typeof value === 'function') el.addEventListener(name.slice(2).toLowerCase(), value);
    else if (value === true) el.setAttribute(name, '');
    else el.setAttribute(name, String(value));
  }
  append(el, children);
  return el;
}

const SVG_NS = 'http://www.w3.org/2000/svg';

export function s(
  tag: string,
  attrs: Record<string, string | number> = {},
  ...children: (Child | Child[])[]
): SVGElement {
  const el = document.createElementNS(SVG_NS, tag);
  for (const [name, value] of Object.entries(attrs)) el.setAttribute(name, String(value));
  append(el, children);
  return el;
}

function append(el: Element, children: (Child | Child[])[]): void {
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    el.append(typeof child === 'object' ? child : String(child));
  }
}

/** A table with a caption; `numeric` columns are right-aligned. */
export function table(
  caption: string,
  headers: readonly string[],
  rows: readonly Child[][],
  options: { numeric?: readonly number[]; testId?: string } = {},
): HTMLElement {
  const numeric = new Set(options.numeric ?? []);
  // A region that may scroll sideways (a phone) is a tab stop, named by its caption, so a keyboard
  // user can scroll it too (axe: scrollable-region-focusable).
  return h(
    'div',
    { class: 'table-wrap', tabindex: 0, role: 'region', 'aria-label': caption },
    h(
      'table',
      { 'data-testid': options.testId },
      h('caption', {}, caption),
      h(
        'thead',
        {},
        h(
          'tr',
          {},
          headers.map((t, i) => h('th', { scope: 'col', class: numeric.has(i) ? 'num' : undefined }, t)),
        ),
      ),
      h(
        'tbody',
        {},
        rows.length === 0
          ? h('tr', {}, h('td', { colspan: headers.length, class: 'note' }, 'nothing in this range'))
          : rows.map((r) =>
              h(
                'tr',
                {},
                r.map((c, i) => h('td', { class: numeric.has(i) ? 'num' : undefined }, c)),
              ),
            ),
      ),
    ),
  );
}

export function badge(status: string): HTMLElement {
  return h('span', { class: `badge s-${status}` }, status);
}

export function errorBox(error: unknown): HTMLElement {
  return h('p', { class: 'error', role: 'alert' }, error instanceof Error ? error.message : String(error));
}

/** A form field: the label names the control by id (a wrapping label would also take a select's options). */
export function field(
  label: string,
  control: HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement,
): HTMLElement {
  control.id ||= `f-${control.name}`;
  return h('div', { class: 'field' }, h('label', { for: control.id }, label), control);
}
