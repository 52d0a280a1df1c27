import { api } from './api.js';
import { timeChart } from './chart.js';
import { badge, errorBox, h, table } from './dom.js';
import { latest, rate } from './format.js';
import type { Page } from './page.js';

interface LineSeries {
  label: string;
  points: [number, number][];
}
interface Overview {
  interval_ms: number;
  decisions: LineSeries[];
  policies: LineSeries[];
  denials: LineSeries[];
  degraded: LineSeries[];
  health: Record<string, { status: string; components: Record<string, { status: string }> }>;
}

/**
 * One chart of rates on the samples' time axis (every sample of the hour, a missing one as 0).
 * `stacked`: the series split one whole (decisions by outcome), so their sum is the top line.
 */
function ratesCard(
  title: string,
  what: string,
  series: LineSeries[],
  times: number[],
  testId: string,
  stacked: boolean,
): HTMLElement {
  const chart =
    times.length === 0
      ? h('p', { class: 'note' }, 'No samples yet: the first rate needs two samples.')
      : series.length === 0
        ? h(
            'p',
            { class: 'note', 'data-testid': `${testId}-none` },
            `No ${what} in the ${times.length} samples of the last hour.`,
          )
        : timeChart({
            title: `${title}, last hour (UTC)`,
            caption: 'Last hour, UTC; the legend and tooltip give each number at the cursor.',
            unit: `${what}/s`,
            kind: 'line',
            stacked,
            x: times,
            series: series.map((s) => {
              const at = new Map(s.points.map(([t, v]) => [t, v]));
              return { label: s.label, values: times.map((t) => at.get(t) ?? 0) };
            }),
          });
  return h(
    'section',
    { class: 'card', 'aria-label': title },
    h('h2', {}, title),
    chart,
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
    // The samples' times: every series has a point at each (the sampler fills a late one's front).
    const times = [
      ...new Set(
        [data.decisions, data.policies, data.denials, data.degraded]
          .flat()
          .flatMap((s) => s.points.map((p) => p[0])),
      ),
    ].sort((a, b) => a - b);
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
        ratesCard(
          'Decisions per second by outcome',
          'decisions',
          data.decisions,
          times,
          'decisions-table',
          true,
        ),
        ratesCard(
          'Policies per second by what each said',
          'policy answers',
          data.policies,
          times,
          'policies-table',
          false,
        ),
        ratesCard('Denials per second by reason', 'denials', data.denials, times, 'denials-table', true),
        ratesCard(
          'Degraded decisions per second by cause',
          'degraded decisions',
          data.degraded,
          times,
          'degraded-table',
          true,
        ),
      ),
    );
  };
  await draw();
  const timer = setInterval(() => void draw(), 5000);
  return () => clearInterval(timer);
};
