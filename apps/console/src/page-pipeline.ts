import { api } from './api.js';
import { categoryChart } from './chart.js';
import { errorBox, h, table } from './dom.js';
import type { Page } from './page.js';

interface Pipeline {
  outbox: { sampled_at: string; length: number; pending: number; oldest_age_seconds: number } | null;
  consumers: {
    group: string;
    state: string;
    totalLag: number;
    namespace: string | null;
    members: { clientId: string; host: string; memberId: string; assignment: Record<string, number[]> }[];
    partitions: {
      topic: string;
      partition: number;
      high: string;
      committed: string | null;
      lag: number;
      stored: string | null;
      storedLag: number | null;
      owner: string | null;
    }[];
  };
  dead_letters: {
    topic: string;
    partition: number;
    offset: string;
    timestamp: string;
    source: string;
    reason: string;
    key: string | null;
    origin: string | null;
  }[];
}

/** Outbox depth and age, the projector group's members, assignments and lag per partition, dead letters. */
export const pipelinePage: Page = async (root) => {
  root.replaceChildren(
    h('h1', {}, 'Ledger and consumers'),
    h('p', { class: 'note' }, 'Reading the group and the dead-letter topic…'),
  );
  let data: Pipeline;
  try {
    data = await api<Pipeline>('admin', '/v1/pipeline');
  } catch (error) {
    root.replaceChildren(h('h1', {}, 'Ledger and consumers'), errorBox(error));
    return;
  }
  const c = data.consumers;
  const lagOf = (p: Pipeline['consumers']['partitions'][number]) => p.storedLag ?? p.lag;
  root.replaceChildren(
    h('h1', {}, 'Ledger and consumers'),
    h(
      'section',
      { 'aria-label': 'Outbox' },
      h('h2', {}, 'Outbox (relay metrics)'),
      data.outbox === null
        ? h(
            'p',
            { class: 'note' },
            'No relay sample (TALLY_CONSOLE_RELAY_URL unset, or the relay did not answer).',
          )
        : h(
            'div',
            { class: 'cards', 'data-testid': 'outbox' },
            h('div', { class: 'stat' }, 'Entries', h('div', { class: 'v' }, data.outbox.length)),
            h('div', { class: 'stat' }, 'Pending', h('div', { class: 'v' }, data.outbox.pending)),
            h(
              'div',
              { class: 'stat' },
              'Oldest entry',
              h('div', { class: 'v' }, `${data.outbox.oldest_age_seconds.toFixed(1)} s`),
            ),
            h('div', { class: 'stat note' }, 'Sampled', h('div', {}, data.outbox.sampled_at)),
          ),
    ),
    h(
      'section',
      { 'aria-label': 'Projector group' },
      h('h2', {}, `Group ${c.group}: ${c.state}, lag ${c.totalLag}`),
      c.namespace === null
        ? null
        : h(
            'p',
            { class: 'note' },
            `Stored offsets of namespace ${c.namespace} (where the projector resumes).`,
          ),
      table(
        'Members and assignments',
        ['client', 'host', 'assigned', 'member'],
        c.members.map((m) => [
          m.clientId,
          m.host,
          Object.entries(m.assignment)
            .map(([t, ps]) => `${t}[${ps.join(',')}]`)
            .join(' '),
          m.memberId,
        ]),
        { testId: 'members-table' },
      ),
      h('h3', {}, 'Projector lag per partition'),
      c.partitions.every((p) => lagOf(p) === 0)
        ? h(
            'p',
            { class: 'note', 'data-testid': 'lag-none' },
            `Caught up: every one of the ${c.partitions.length} partitions has lag 0.`,
          )
        : categoryChart({
            title: 'Projector lag per partition (events not yet applied)',
            categoryName: 'partition',
            unit: 'events',
            categories: c.partitions.map((p) => `${p.topic}/${p.partition}`),
            series: [{ label: 'lag', values: c.partitions.map(lagOf) }],
          }),
      table(
        'Lag per partition',
        ['topic', 'partition', 'high', 'committed', 'stored', 'lag', 'owner'],
        c.partitions.map((p) => [
          p.topic,
          p.partition,
          p.high,
          p.committed ?? '—',
          p.stored ?? '—',
          lagOf(p),
          p.owner ?? '—',
        ]),
        { numeric: [1, 2, 3, 4, 5], testId: 'partitions-table' },
      ),
    ),
    h(
      'section',
      { 'aria-label': 'Dead letters' },
      h('h2', {}, `Dead letters (newest ${data.dead_letters.length})`),
      table(
        'Dead letters with their reasons',
        ['time', 'source', 'reason', 'came from', 'key', 'dead-letter record'],
        data.dead_letters.map((d) => [
          d.timestamp,
          d.source,
          d.reason,
          d.origin ?? '—',
          d.key ?? '—',
          `${d.topic}/${d.partition} @${d.offset}`,
        ]),
        { testId: 'dead-letters-table' },
      ),
    ),
  );
};
