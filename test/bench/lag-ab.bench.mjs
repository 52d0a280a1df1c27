// Projector settings A/B at a fixed rate: Tally's HTTP side with its relay on a private stack, the
// projector restarted per variant (at the newest offsets) with the variant's TALLY_* environment,
// rounds alternating the variants; per measurement the CPU µs per decision of every process (the
// projector's and the broker's included) and the decision → projection lag (lib/steady-lag.mjs).
// Settings (env): BENCH_LAG_AB_RATE (2000), BENCH_LAG_AB_VARIANTS (JSON {name: {TALLY_X: v}}; a
// variant may set `relay` env too: the relay is then restarted with it), BENCH_ROUNDS (3),
// BENCH_DURATION, BENCH_WARMUP, BENCH_PORT_BASE, BENCH_STACK_* (as the steady bench).
import { join } from 'node:path';
import { loadavg } from 'node:os';
import { ROOT } from './lib/built.mjs';
import { startRelay } from './lib/ledger-apps.mjs';
import { writeJson } from './lib/report.mjs';
import { caseLoad, rlsSettings } from './lib/rls-load.mjs';
import { primeProjector, projectionLag, projectorAtLatest } from './lib/steady-lag.mjs';
import { measureSteady, processGroups } from './lib/steady-measure.mjs';
import { withTallyStack } from './lib/steady-start.mjs';

const OUT_DIR = join(ROOT, '.local/bench');
const log = (line) => process.stdout.write(`[bench lag-ab] ${line}\n`);
const settings = { ...rlsSettings(), rate: Number(process.env.BENCH_LAG_AB_RATE ?? 2000) };
const variants = JSON.parse(process.env.BENCH_LAG_AB_VARIANTS ?? '{"base":{}}');

async function withEnv(env, fn) {
  const saved = Object.fromEntries(Object.keys(env).map((k) => [k, process.env[k]]));
  Object.assign(process.env, env);
  try {
    return await fn();
  } finally {
    for (const [k, v] of Object.entries(saved))
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
  }
}

async function main() {
  await withTallyStack({ settings, outDir: OUT_DIR, log }, async ({ stack, tally, cleanup }) => {
    await primeProjector(stack, settings, tally.redis, log);
    const load = caseLoad('http', tally, { ...settings, rate: settings.rate });
    log(`prewarm 20 s at ${settings.rate}/s`);
    await load(20);
    let relayEnv = '{}';
    let relay = null;
    cleanup.push(() => relay?.stop());
    const results = {};
    for (let n = 0; n < settings.rounds; n++) {
      for (const [name, env] of Object.entries(variants)) {
        const { relay: relayVars = {}, ...projectorVars } = env;
        if (JSON.stringify(relayVars) !== relayEnv) {
          // The side's relay (or the last variant's) gives way to one with this variant's settings.
          if (relay) await relay.stop();
          else process.kill(tally.pids.relay, 'SIGTERM');
          relay = await withEnv(relayVars, () => startRelay(stack, settings, log));
          tally.pids.relay = relay.pid;
          tally.pids.relayMetricsUrl = `http://127.0.0.1:${relay.port}/metrics`;
          relayEnv = JSON.stringify(relayVars);
        }
        const projector = await withEnv(projectorVars, () => projectorAtLatest(stack, settings, log));
        try {
          await load(settings.warmupSeconds);
          const during = () =>
            measureSteady({
              load,
              groups: processGroups(tally, { projector: projector.pid }),
              relayMetricsUrl: tally.pids.relayMetricsUrl,
              warmupSeconds: 0,
              durationSeconds: settings.durationSeconds,
            });
          const lag = await projectionLag({ side: tally, redis: tally.redis, during });
          const m = lag.background;
          log(
            `round ${n + 1} ${name}: ${m.okPerSec}/s, CPU µs/decision ${JSON.stringify(m.cpuUs)} total ${m.totalCpuUs}; ` +
              `lag p50 ${lag.p50} p90 ${lag.p90} p99 ${lag.p99} max ${lag.max} (${lag.arrived}/${lag.markers}); ` +
              `records/produce ${m.relay.recordsPerRequest}; idle ${m.machine?.idleMsPerSec} other ${m.machine?.otherMsPerSec} ms/s`,
          );
          (results[name] ??= []).push(lag);
        } finally {
          await projector.stop();
        }
      }
    }
    writeJson(join(OUT_DIR, 'lag-ab.json'), {
      at: new Date().toISOString(),
      settings,
      variants,
      loadAvg: loadavg(),
      results,
    });
    log(
      `load average ${loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')}`,
    );
  });
}

main().then(
  () => process.exit(0),
  (error) => {
    process.stderr.write(`lag-ab: ${error.stack ?? error}\n`);
    process.exit(1);
  },
);
