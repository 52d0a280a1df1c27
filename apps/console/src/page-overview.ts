import { api } from './api.js';
import { lineChart, type LineSeries } from './chart.js';
import { badge, errorBox, h, table } from './dom.js';
import { latest, rate } from './format.js';
import type { Page } from './page.js';

interface Overview {
  interval_ms: number;
  decisions: LineSeries[];
  policies: LineSeries[];
  denials: LineSeries[];
  degraded: LineSeries[];
  health: Record<string, { status: string; components: Record<string, { status: string }> }>;
}

function ratesCard(title: string, series: LineSeries[], testId: string): HTMLElement {
  return h(
    'section',
    { class: 'card', 'aria-label': title },
    h('h2', {}, title),
    lineChart(`${title}, last hour`, series),
    table(
      `${title}: latest rate`,
      ['series', 'now', 'peak'],
      series.map((x) => [x.label, rate(latest(x.points)), rate(Math.max(0, ...x.points.map((p) => p[1])))]),
      { numeric: [1, 2], testId },
    ),
  );
}

/**
 * Decisions/s by outcome (each decision once), what each policy said, denials by reason, degraded, the
 * last hour; health of every component.
 */
export const overviewPage: Page = async (root) => {
  const draw = async (): Promise<void> => {
    let data: Overview;
    try {
      data = await api<Overview>('overview', '/v1/overview');
    } catch (error) {
      root.replaceChildren(h('h1', {}, 'Overview'), errorBox(error));
      return;
    }
    root.replaceChildren(
      h('h1', {}, 'Overview'),
      h(
        'p',
        { class: 'note' },
        `Rates between samples of the decision API's metrics, every ${data.interval_ms / 1000} s, refreshed live.`,
      ),
      h(
        'section',
        { 'aria-label': 'Health' },
        h('h2', {}, 'Health'),
        h(
          'div',
          { class: 'cards', 'data-testid': 'health' },
          Object.entries(data.health).map(([name, health]) =>
            h(
              'div',
              { class: 'stat', 'data-service': name },
              h('div', {}, h('strong', {}, name), ' ', badge(health.status)),
              h(
                'ul',
                { class: 'note' },
                Object.entries(health.components).map(([c, v]) => h('li', {}, `${c}: `, badge(v.status))),
              ),
            ),
          ),
        ),
      ),
      h(
        'div',
        { class: 'grid' },
        ratesCard('Decisions per second by outcome', data.decisions, 'decisions-table'),
        ratesCard('Policies per second by what each said', data.policies, 'policies-table'),
        ratesCard('Denials per second by reason', data.denials, 'denials-table'),
        ratesCard('Degraded decisions per second by cause', data.degraded, 'degraded-table'),
      ),
    );
  };
  await draw();
  const timer = setInterval(() => void draw(), 5000);
  return () => clearInterval(timer);
};
