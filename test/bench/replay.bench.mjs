// The replay benchmark (issue 5 items 1 and 8, DESIGN §6): printed figures, not a timed test. One
// run on a PRIVATE Redis + Kafka (docker/local/stack.sh on free ports, stopped at the end):
//   fill once: the ledger bench's distribution (N allowed decisions of 1000 tenants through
//     decide.lua), as the relay publishes it (one usage event each) into the bench topics;
//   baseline: the same ranges read by readTopicRanges (the reader replay uses: fresh group, seeks,
//     same concurrency) with a handler that only counts — the Kafka read ceiling of this run;
//   replay: the built `replay()` of @tally/ops into a fresh namespace r1, r2, … per round.
// Rounds alternate the order of the pair (baseline first, then replay first) so neither side always
// gets the warmer broker; ratios are taken within a round and the headline is the median.
// Then, in the same run: `tally replay --workers 1` and `--workers 2` (the CLI's forked worker
// processes, `replayWithWorkers`), alternated over BENCH_ROUNDS pairs, each checked equal to the
// previous namespace; their ratio is the scaling figure. And the per-slot rate: the events of ONE
// shard (one hash-tag slot: its partitions of both topics) replayed alone, in one process — what
// one slot (so one Redis Cluster node) absorbs from one core.
// Each replay is checked in passing: every record applied once, nothing skipped as duplicate or
// invalid, and the same aggregates as the previous round's namespace (deterministic replay), which
// is then dropped so Redis memory stays flat over the rounds.
// Settings (env): BENCH_REPLAY_DECISIONS (100000), BENCH_ROUNDS (3), BENCH_REPLAY_PARTITIONS (12),
// BENCH_REPLAY_CONCURRENCY (replay's default, 4; set = passed to both sides), BENCH_PROFILE=1 (CPU
// profile of the last round's replay into .local/bench/replay-<time>.cpuprofile; read it with
// test/bench/profile-summary.mjs; sampling slows that round's replay, so compare rates without it),
// BENCH_DIST, BENCH_STACK_DIR (see built.mjs and stack.mjs).
import { mkdirSync } from 'node:fs';
import { availableParallelism, loadavg } from 'node:os';
import { join } from 'node:path';
import { hotPathRedis, loadBuilt, loadEngine, ROOT } from './lib/built.mjs';
import { startCpuProfile } from './lib/cpu-profile.mjs';
import { kafkaOf } from './lib/kafka-raw.mjs';
import { round } from './lib/load.mjs';
import { waitFor } from './lib/processes.mjs';
import { writeJson } from './lib/report.mjs';
import { fillReplayTopics } from './lib/replay-topics.mjs';
import { medianFigures, printReplaySummary, REPLAY_TARGETS, roundFigures } from './lib/replay-report.mjs';
import { startStack } from './lib/stack.mjs';

const OUT_DIR = join(ROOT, '.local/bench');
const int = (name, fallback) => Number.parseInt(process.env[name] ?? String(fallback), 10);
const concurrencySet = process.env.BENCH_REPLAY_CONCURRENCY !== undefined;
const settings = {
  decisions: int('BENCH_REPLAY_DECISIONS', 100_000),
  rounds: Math.max(1, int('BENCH_ROUNDS', 3)),
  partitions: int('BENCH_REPLAY_PARTITIONS', 12),
  concurrency: int('BENCH_REPLAY_CONCURRENCY', loadBuilt('libs/ops/src/index.js').REPLAY_CONCURRENCY),
  tenants: 1000,
  shards: 64,
  // The relay's defaults (as in the ledger bench): the topics hold what the relay would publish.
  relayBatch: 1000,
  relayMaxBatchBytes: 512 * 1024,
  // The projector's default (TALLY_AUDIT_RETENTION 30d); nothing here is old enough to be trimmed.
  auditRetentionMs: 30 * 86_400_000,
  profile: process.env.BENCH_PROFILE === '1',
  cpus: availableParallelism(),
  node: process.version,
};
const TOPICS = { usage: 'bench.replay.usage.v1', decision: 'bench.replay.decision.v2' };
const log = (line) => process.stdout.write(`[replay] ${line}\n`);

/** Rates of one read: whole call, and steady (from the first batch on; group join excluded). */
function rates(read, started, first, firstBatch, ended) {
  const seconds = (ended - started) / 1000;
  return {
    events: read,
    seconds: round(seconds, 3),
    firstBatchMs: Math.round(first - started),
    eventsPerSec: Math.round(read / seconds),
    steadyPerSec: Math.round((read - firstBatch) / ((ended - first) / 1000)),
  };
}

async function bareRead(ops, ledger, concurrency) {
  const started = performance.now();
  const ranges = [
    ...(await ops.planTopicRange(ledger.admin, TOPICS.usage, 'earliest', 'latest')),
    ...(await ops.planTopicRange(ledger.admin, TOPICS.decision, 'earliest', 'latest')),
  ];
  let first = 0;
  let firstBatch = 0;
  const read = await ops.readTopicRanges(
    ledger.consumers,
    ranges,
    (_topic, _partition, records) => {
      if (first === 0) {
        first = performance.now();
        firstBatch = records.length;
      }
    },
    { purpose: 'bench-baseline', concurrency },
  );
  return rates(read, started, first, firstBatch, performance.now());
}

async function timedReplay(ops, deps, namespace) {
  let first = 0;
  let firstBatch = 0;
  const started = performance.now();
  const result = await ops.replay(deps, {
    namespace,
    from: 'earliest',
    to: 'latest',
    topics: TOPICS,
    auditRetentionMs: settings.auditRetentionMs,
    ...(concurrencySet ? { concurrency: settings.concurrency } : {}),
    // The first report comes right after the first handled batch (later ones are throttled).
    onProgress: (p) => {
      if (first === 0) {
        first = performance.now();
        firstBatch = p.done;
      }
    },
  });
  return { result, ...rates(result.records, started, first, firstBatch, performance.now()) };
}

/** `replayWithWorkers` through the CLI's own fork port (the built `replay-worker.js`). */
async function timedWorkers(ops, deps, namespace, workers, stackEnv) {
  const { forkedReplayWorkers } = loadBuilt('apps/cli/src/replay-worker.process.js');
  const started = performance.now();
  const result = await ops.replayWithWorkers(
    deps,
    {
      namespace,
      from: 'earliest',
      to: 'latest',
      topics: TOPICS,
      auditRetentionMs: settings.auditRetentionMs,
      workers,
    },
    forkedReplayWorkers({ env: stackEnv, overrides: {} }),
  );
  const seconds = (performance.now() - started) / 1000;
  return { workers, result, seconds: round(seconds, 3), eventsPerSec: Math.round(result.records / seconds) };
}

/** Shard 0's ranges alone, in this process: the rate one slot takes. */
async function timedSlot(ops, deps, namespace) {
  const plan = await ops.planReplay(deps, {
    namespace,
    from: 'earliest',
    to: 'latest',
    topics: TOPICS,
    auditRetentionMs: settings.auditRetentionMs,
  });
  const [mine] = ops.dealRanges(plan, plan.shards);
  const started = performance.now();
  const outcome = await ops.replayRanges(deps, plan, mine);
  const seconds = (performance.now() - started) / 1000;
  return {
    shards: plan.shards,
    partitions: mine.length,
    events: outcome.applied,
    seconds: round(seconds, 3),
    eventsPerSec: Math.round(outcome.applied / seconds),
  };
}

function check(what, ok, detail) {
  if (!ok) throw new Error(`replay bench: ${what} (${JSON.stringify(detail)})`);
}

export async function runReplayBench() {
  mkdirSync(OUT_DIR, { recursive: true });
  const stamp = new Date().toISOString().replace(/[:.]/g, '-');
  const engine = loadEngine();
  const ops = loadBuilt('libs/ops/src/index.js');
  const { createLedger } = loadBuilt('libs/ledger/src/index.js');
  const { createRedisClient } = loadBuilt('libs/redis/src/index.js');
  const stack = await startStack(log);
  const fillRedis = hotPathRedis(stack.redisUrl);
  const redis = createRedisClient({ mode: 'single', url: stack.redisUrl }, 'command');
  const kafka = kafkaOf(stack.brokers);
  const admin = kafka.admin();
  const ledger = createLedger({
    brokers: stack.brokers.split(','),
    clientId: 'tally-replay-bench',
    logLevel: 'nothing',
  });
  let profiler;
  try {
    await waitFor('Redis', () => fillRedis.status === 'ready', 10_000);
    await admin.connect();
    log(`filling 2 topics × ${settings.partitions} partitions with ${settings.decisions} decisions' events`);
    const events = await fillReplayTopics({ redis: fillRedis, engine, kafka, admin }, TOPICS, settings);
    check('every decision gave its one record, a usage event', events === settings.decisions, {
      events,
    });
    log(`${events} events in the topics`);

    const rounds = [];
    let previous;
    for (let i = 1; i <= settings.rounds; i++) {
      const namespace = `r${i}`;
      const load = round(loadavg()[0], 2);
      const profileThis = settings.profile && i === settings.rounds;
      const runReplay = async () => {
        if (profileThis) profiler = await startCpuProfile();
        const replayed = await timedReplay(ops, { ledger, redis }, namespace);
        if (profileThis) {
          await profiler.stop(join(OUT_DIR, `replay-${stamp}.cpuprofile`));
          profiler = undefined;
        }
        return replayed;
      };
      const runBaseline = () => bareRead(ops, ledger, settings.concurrency);
      // Odd rounds: baseline first; even rounds: replay first.
      let baseline;
      let replayed;
      if (i % 2 === 1) {
        baseline = await runBaseline();
        replayed = await runReplay();
      } else {
        replayed = await runReplay();
        baseline = await runBaseline();
      }
      const { result } = replayed;
      check('the bare read saw every event once', baseline.events === events, {
        read: baseline.events,
        events,
      });
      check('replay applied every event once', result.records === events && result.applied === events, {
        records: result.records,
        applied: result.applied,
        events,
      });
      check('replay skipped nothing', result.duplicates === 0 && result.invalid === 0, {
        duplicates: result.duplicates,
        invalid: result.invalid,
      });
      let cellsCompared = null;
      if (previous !== undefined) {
        // Every bucket (a year ahead covers the current month's), not just the range replay records as
        // covered: these events are younger than its tail margin.
        const diff = await ops.reconcileNamespaces(redis, {
          a: previous,
          b: namespace,
          fromMs: 0,
          toMs: Date.now() + 366 * 86_400_000,
        });
        check(
          `replay is deterministic (${previous} vs ${namespace})`,
          diff.cells > 0 && diff.differences.length === 0,
          {
            cells: diff.cells,
            differences: diff.differences.slice(0, 5),
          },
        );
        cellsCompared = diff.cells;
        await ops.dropNamespace(redis, previous);
      }
      previous = namespace;
      const figures = roundFigures(baseline, replayed);
      log(
        `round ${i} (load ${load}): replay ${replayed.eventsPerSec} events/s (its own meter ${result.perSecond}), ` +
          `bare read ${baseline.eventsPerSec} events/s, ratio ${figures.ratio}` +
          (cellsCompared === null ? '' : `; ${cellsCompared} usage cells equal to the previous round's`),
      );
      const { offsets: _offsets, ...summary } = result;
      rounds.push({ round: i, loadAvg1m: load, baseline, replay: { ...replayed, result: summary }, figures });
    }

    // Worker processes: 1 and 2, alternated, each namespace equal to the one before it.
    const stackEnv = { ...process.env, REDIS_URL: stack.redisUrl, KAFKA_BROKERS: stack.brokers };
    const workerRuns = [];
    for (let i = 1; i <= settings.rounds; i++) {
      for (const workers of i % 2 === 1 ? [1, 2] : [2, 1]) {
        const namespace = `w${i}x${workers}`;
        const run = await timedWorkers(ops, { ledger, redis }, namespace, workers, stackEnv);
        check(`--workers ${workers} applied every event once`, run.result.applied === events, run.result);
        const diff = await ops.reconcileNamespaces(redis, {
          a: previous,
          b: namespace,
          fromMs: 0,
          toMs: Date.now() + 366 * 86_400_000,
        });
        check(`--workers ${workers} equals ${previous}`, diff.cells > 0 && diff.differences.length === 0, {
          differences: diff.differences.slice(0, 5),
        });
        await ops.dropNamespace(redis, previous);
        previous = namespace;
        log(`workers ${workers}: ${run.eventsPerSec} events/s (${run.seconds} s)`);
        const { offsets: _o, ...summary } = run.result;
        workerRuns.push({ round: i, ...run, result: summary });
      }
    }
    const medianOf = (list) => [...list].sort((a, b) => a - b)[Math.floor((list.length - 1) / 2)];
    const rateOf = (n) => medianOf(workerRuns.filter((r) => r.workers === n).map((r) => r.eventsPerSec));
    const workersFigures = {
      oneWorkerEventsPerSec: rateOf(1),
      twoWorkersEventsPerSec: rateOf(2),
      ratio: round(rateOf(2) / rateOf(1), 2),
    };
    log(
      `workers: 1 → ${workersFigures.oneWorkerEventsPerSec} events/s, 2 → ${workersFigures.twoWorkersEventsPerSec} events/s, ratio ${workersFigures.ratio} (medians, ${settings.cpus} cores)`,
    );
    const slot = await timedSlot(ops, { ledger, redis }, 'slot1');
    log(
      `per slot: shard 0 of ${slot.shards} (${slot.partitions} partitions, ${slot.events} events) at ${slot.eventsPerSec} events/s in one process`,
    );
    await ops.dropNamespace(redis, 'slot1');

    const perRound = rounds.map((r) => r.figures);
    const med = medianFigures(perRound);
    const met = { replayEventsPerSec: med.replayEventsPerSec >= REPLAY_TARGETS.replayEventsPerSec };
    printReplaySummary(settings, events, perRound, med, met);
    const out = join(OUT_DIR, `replay-${stamp}.json`);
    writeJson(out, {
      at: new Date().toISOString(),
      settings,
      events,
      median: med,
      perRound,
      targets: REPLAY_TARGETS,
      met,
      rounds,
      workers: { median: workersFigures, runs: workerRuns },
      perSlot: slot,
      ...(settings.profile ? { profile: join(OUT_DIR, `replay-${stamp}.cpuprofile`) } : {}),
    });
    log(`figures written to ${out}`);
    if (settings.profile)
      log(`profile: node test/bench/profile-summary.mjs ${join(OUT_DIR, `replay-${stamp}.cpuprofile`)}`);
    return { events, median: med, perRound, met };
  } finally {
    profiler?.discard();
    await ledger.close().catch(() => undefined);
    await admin.disconnect().catch(() => undefined);
    await redis.quit().catch(() => redis.disconnect());
    await fillRedis.quit().catch(() => fillRedis.disconnect());
    await stack.down();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  runReplayBench().then(
    () => process.exit(0),
    (error) => {
      process.stderr.write(
        `replay bench: ${error instanceof Error ? (error.stack ?? error.message) : error}\n`,
      );
      process.exit(1);
    },
  );
}
