// npm run bench: build the tree, then run the benchmarks against the built apps, printed figures:
//   hot-path  test/bench/hot-path.bench.mjs (decision API vs its raw ceilings, shared or private Redis)
//   ledger    test/bench/ledger.bench.mjs (relay, projector, lag, outbox depth; private Redis + Kafka)
//   replay    test/bench/replay.bench.mjs (`tally replay` vs a bare read of the same ranges; private stack)
//   durable   test/bench/durable.bench.mjs (the API with and without WAIT 1, master + replica pair)
//   steady    test/bench/steady.bench.mjs (CPU per decision of every process, latency and records per
//             produce request at a fixed rate and at saturation, beside envoyproxy/ratelimit when
//             PEER_RATELIMIT_BIN is set; relay idle CPU; decision → projection lag)
//   rls       test/bench/rls.bench.mjs (Envoy RLS: Tally vs envoyproxy/ratelimit when PEER_RATELIMIT_BIN is set)
//   script-cost  the hot-path bench's script cost phase alone (Redis µs per decide.lua call)
//   memory    the hot-path bench's memory phase alone (RSS per decision-API process, CPU per request)
//   tracing   the hot-path bench's tracing phase alone (CPU and latency, tracing off / 1 % / 100 %)
// `npm run bench` runs the first four in that order; `npm run bench -- durable` (or any of the
// names) runs the ones named.
// `--no-build` reuses dist/ as it is. Settings are listed in each bench file.
import { execFileSync } from 'node:child_process';

const major = Number(process.versions.node.split('.')[0]);
if (major < 22) {
  process.stderr.write(`bench: Node ${process.version} is too old; run: source scripts/node-env.sh\n`);
  process.exit(2);
}
const BENCHES = {
  'hot-path': async () => (await import('../test/bench/hot-path.bench.mjs')).runHotPathBench(),
  memory: async () => (await import('../test/bench/hot-path.bench.mjs')).runMemoryBench(),
  tracing: async () => (await import('../test/bench/hot-path.bench.mjs')).runTracingBench(),
  ledger: async () => (await import('../test/bench/ledger.bench.mjs')).runLedgerBench(),
  replay: async () => (await import('../test/bench/replay.bench.mjs')).runReplayBench(),
  steady: async () => (await import('../test/bench/steady.bench.mjs')).runSteadyBench(),
  durable: async () => (await import('../test/bench/durable.bench.mjs')).runDurableBench(),
  rls: async () => (await import('../test/bench/rls.bench.mjs')).runRlsBench(),
  'script-cost': async () => (await import('../test/bench/hot-path.bench.mjs')).runScriptCostBench(),
};
/**
 * Run only when named: a topology of its own (a replica), a question of its own (a setting's cost,
 * the script's cost alone, the memory phase alone), another product beside Tally (the RLS peer).
 * `steady` is in the default run: Tally's own targets (the ledger's CPU per decision, the relay's
 * idle cost, the projection lag) need no peer; with PEER_RATELIMIT_BIN it also sets the peer beside.
 */
const ON_REQUEST = new Set(['durable', 'rls', 'script-cost', 'memory', 'tracing']);
const args = process.argv.slice(2);
const named = args.filter((a) => !a.startsWith('--'));
const unknown = named.filter((name) => !(name in BENCHES));
if (unknown.length > 0) {
  process.stderr.write(
    `bench: unknown benchmark ${unknown.join(', ')}; one of: ${Object.keys(BENCHES).join(', ')}\n`,
  );
  process.exit(2);
}
const root = new URL('..', import.meta.url).pathname;
if (!args.includes('--no-build')) {
  execFileSync(process.execPath, ['scripts/build.mjs'], { cwd: root, stdio: 'inherit' });
}
try {
  const defaults = Object.keys(BENCHES).filter((name) => !ON_REQUEST.has(name));
  for (const name of named.length > 0 ? named : defaults) await BENCHES[name]();
  process.exit(0);
} catch (error) {
  process.stderr.write(`bench: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
}
