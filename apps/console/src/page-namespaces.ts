import { api } from './api.js';
import { badge, errorBox, h, table } from './dom.js';
import type { Page } from './page.js';

interface Namespace {
  name: string;
  active: boolean;
  events: number;
  updated: string | null;
  shards: number;
  replay?: string;
}

/** Namespaces with their replay state; a switch asks for the name to be typed again. */
export const namespacesPage: Page = async (root) => {
  const draw = async (notice?: Node): Promise<void> => {
    let list: Namespace[];
    try {
      list = (await api<{ namespaces: Namespace[] }>('admin', '/v1/namespaces')).namespaces;
    } catch (error) {
      root.replaceChildren(h('h1', {}, 'Namespaces'), errorBox(error));
      return;
    }
    root.replaceChildren(
      h('h1', {}, 'Namespaces'),
      ...(notice ? [notice] : []),
      table(
        'Projection namespaces',
        ['name', 'state', 'events', 'updated', 'shards', 'replay', 'action'],
        list.map((n) => [
          n.name,
          n.active ? badge('active') : 'inactive',
          n.events,
          n.updated ?? '—',
          n.shards,
          n.replay ? badge(n.replay) : '—',
          n.active
            ? ''
            : h(
                'button',
                { type: 'button', class: 'secondary', onclick: () => confirmSwitch(n) },
                `Switch to ${n.name}…`,
              ),
        ]),
        { numeric: [2, 4], testId: 'namespaces-table' },
      ),
    );
  };

  const confirmSwitch = (n: Namespace): void => {
    const typed = h('input', { id: 'confirm-name', autocomplete: 'off' });
    const go = h('button', { type: 'submit', disabled: true }, 'Switch');
    const force = n.replay !== undefined && n.replay !== 'complete';
    const problem = h('div', { 'aria-live': 'polite' });
    const dialog = h(
      'dialog',
      { 'aria-labelledby': 'switch-title' },
      h(
        'form',
        { method: 'dialog' },
        h('h2', { id: 'switch-title' }, `Switch queries to ${n.name}?`),
        h(
          'p',
          {},
          'Every usage, top-keys and audit query will read this namespace, and the projector will write it.',
          force ? ' Its replay is not complete: it will be switched anyway.' : '',
        ),
        h('div', { class: 'field' }, h('label', { for: 'confirm-name' }, `Type ${n.name} to confirm`), typed),
        problem,
        h(
          'p',
          { class: 'filters' },
          go,
          h('button', { type: 'button', class: 'secondary', onclick: () => dialog.close() }, 'Cancel'),
        ),
      ),
    );
    typed.addEventListener('input', () => (go.disabled = typed.value !== n.name));
    dialog.querySelector('form')?.addEventListener('submit', (e) => {
      e.preventDefault();
      void api<{ previous: string | null; active: string }>('admin', '/v1/namespaces:switch', {
        method: 'POST',
        body: { name: n.name, confirm: typed.value, force },
      }).then(
        (r) => {
          dialog.close();
          dialog.remove();
          void draw(
            h(
              'p',
              { role: 'status', 'data-testid': 'switched' },
              `Switched from ${r.previous ?? '(none)'} to ${r.active}.`,
            ),
          );
        },
        (error: unknown) => problem.replaceChildren(errorBox(error)),
      );
    });
    dialog.addEventListener('close', () => dialog.remove());
    root.append(dialog);
    dialog.showModal();
  };

  await draw();
};
