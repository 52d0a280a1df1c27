// The ledger bench's summary table: figures, ratios against the raw kafkajs ceilings of the same run,
// and the targets of issue 4 item 7.

export const LEDGER_TARGETS = { projectorEventsPerSec: 50_000, lagP99Ms: 1000, outboxBounded: true };

export function printLedgerSummary(f, ratios, met) {
  const { settings: s, relay, rawProducer, projector, twoMembers, rawConsumer, outbox, lag } = f;
  const row = (cells) => cells.map((c, i) => String(c).padEnd(i === 0 ? 40 : 18)).join('');
  const mark = (ok) => (ok ? 'met' : 'MISSED');
  const lines = [
    '',
    `ledger, ${s.decisions} decisions (${relay.events} events) of ${s.tenants} tenants, ` +
      `${s.partitions} partitions, ${s.cpus} cores, private Redis + Kafka`,
    row(['phase', 'events/s', 'raw kafkajs', 'ratio', 'target']),
    row([
      'relay: outbox → Kafka',
      relay.eventsPerSec,
      rawProducer.eventsPerSec,
      ratios.relayVsRawProducer,
      '',
    ]),
    row([
      'projector: Kafka → projection',
      projector.eventsPerSec,
      rawConsumer.eventsPerSec,
      ratios.projectorVsRawConsumer,
      `≥ ${LEDGER_TARGETS.projectorEventsPerSec} ${mark(met.projectorEventsPerSec)}`,
    ]),
    row([
      'projector, two members (same cores)',
      twoMembers.eventsPerSec,
      '',
      '',
      `≥ ${LEDGER_TARGETS.projectorEventsPerSec} ${mark(met.twoMembersEventsPerSec)}`,
    ]),
    '',
    row(['load', 'measured', '', '', 'target']),
    row(['API max rate (2xx req/s)', outbox.apiOkPerSec, `p99 ${outbox.apiLatencyMs.p99} ms`, '', '']),
    row([
      'outbox depth at max rate',
      `max ${outbox.maxDepth}`,
      `final ${outbox.finalDepth}`,
      `${outbox.growthPerSec}/s`,
      `bounded ${mark(met.outboxBounded)}`,
    ]),
    row(['outbox drain after the load', `${outbox.drainSeconds} s`, '', '', '']),
    row([
      `decision → projection lag @ ${lag.rate} req/s`,
      `p50 ${lag.p50} ms`,
      `p99 ${lag.p99} ms`,
      `n=${lag.samples} lost=${lag.lost}`,
      `p99 < ${LEDGER_TARGETS.lagP99Ms} ms ${mark(met.lagP99Ms)}`,
    ]),
    '',
  ];
  process.stdout.write(lines.join('\n') + '\n');
}
