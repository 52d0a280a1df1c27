// The EVALSHA arguments of one decision on the bench policy, built by the engine's own code from the
// built tree (decision-plan.ts `planDecision`, then decide.script.ts `decideArgs`): the ceiling and
// the outbox fill send exactly what the decision API would send, legend changes included.
import { loadBuilt } from './built.mjs';

/** The bench policy: the same two windows the API is given in its policy file. */
export const BENCH_POLICY = {
  name: 'bench-hot-path',
  burst: { name: 'burst', algorithm: 'token_bucket', code: 't', limit: 10_000_000, periodMs: 1000 },
  sustained: {
    name: 'sustained',
    algorithm: 'fixed_window',
    code: 'f',
    limit: 10_000_000_000,
    periodMs: 60_000,
  },
};

/**
 * The script cost phase's variant with a third window, `concurrency` (a limit never reached, leases
 * of BENCH_LEASE_TTL (1s) never released: each commit also reclaims the leases that expired since), to price a
 * concurrency window and its lease record against the same two windows without it.
 */
const CONCURRENCY_WINDOW = `      - { name: inflight, role: burst, algorithm: concurrency, limit: 1000000000, lease_ttl: ${process.env.BENCH_LEASE_TTL ?? '1s'} }`;

export function benchPolicyYaml({ concurrency = false } = {}) {
  const { name, burst, sustained } = BENCH_POLICY;
  const window = (role, w) =>
    `      - { name: ${w.name}, role: ${role}, algorithm: ${w.algorithm}, limit: ${w.limit}, period: ${w.periodMs}ms }`;
  return [
    'policies:',
    `  - name: ${name}`,
    '    match: { route: evaluate }',
    '    key: [principal]',
    '    windows:',
    window('burst', burst),
    window('sustained', sustained),
    ...(concurrency ? [CONCURRENCY_WINDOW] : []),
    '    max_cost: 100',
    '    on_backend_failure: fail_closed',
    '',
  ].join('\n');
}

/** A fixed version in the payload (same length as the policy file's content hash). */
const POLICY_SET_VERSION = '0123456789ab';
let sequence = 0;
const benchPolicySets = new Map();

/** Compiled on first use, so that importing `benchPolicyYaml` does not need a built tree. */
function policySet(concurrency = false) {
  if (!benchPolicySets.has(concurrency)) {
    const compiled = loadBuilt('libs/policy/src/index.js').compilePolicyFile(
      benchPolicyYaml({ concurrency }),
    );
    if (!compiled.ok) throw new Error(`bench policy: ${JSON.stringify(compiled.errors)}`);
    benchPolicySets.set(concurrency, { ...compiled.set, version: POLICY_SET_VERSION });
  }
  return benchPolicySets.get(concurrency);
}

/**
 * `[numkeys, ...KEYS, ...ARGV]` for one decision of `cost` by `principal` of `tenant` on the bench
 * policy, no idempotency key, Redis clock. The policy is planned whatever the route (as the old
 * hand-built arguments did), which also spares the ceiling the policy match.
 */
export function decideArgs(engine, options) {
  return engine.decideArgs(benchPlan(engine, options), 0);
}

/**
 * The same decision in the argument layout decide.lua took before the policy state hashes
 * (docs/adr/0008-one-hash-per-policy-key.md): one hash per window (`…:w:<policy>:<window>:…`) and
 * the algorithm's letter alone. The issue-time script (61f73be) and the script before that change
 * (`BENCH_DECIDE_BASELINE`, `BENCH_DECIDE_BEFORE`) are measured with these, so each row runs with the
 * keys it was written for. Built from today's plan: only the window keys and codes differ.
 */
export function decideArgsOneHashPerWindow(engine, options) {
  const plan = benchPlan(engine, options);
  const args = legacyArgv(engine.decideArgs(plan, 0));
  const keys = Number(args[0]);
  const scope = engine.encodeScope(options.tenant);
  plan.windows.forEach((w, i) => {
    const { key } = plan.policies.find((p) => p.policy === w.policy);
    args[1 + 2 + i] = engine.windowKey(plan.shard, scope, w.policy.name, w.name, key);
    // ARGV begins after numkeys and the keys: 6 fixed arguments, then 5 per window, its code first.
    const code = 1 + keys + 6 + 5 * i;
    args[code] = String(args[code]).slice(0, 1);
  });
  return args;
}

/**
 * Today's `[numkeys, ...KEYS, ...ARGV]` in the ARGV layout decide.lua took before its layout table
 * (libs/engine/src/algorithms/decide-layout.ts): 5 per window (no `param`), then the override count
 * and its entries, then a lease's id and payload without a count. Scripts written for that layout
 * (the baselines, the minimal and floor scripts) are run with it.
 */
export function legacyArgv(args) {
  const argv = 1 + Number(args[0]); // index of ARGV[1]
  const windows = Number(args[argv + 5]);
  const out = args.slice(0, argv + 6);
  for (let i = 0; i < windows; i++) out.push(...args.slice(argv + 6 + 6 * i, argv + 6 + 6 * i + 5));
  let at = argv + 6 + 6 * windows;
  const overrides = Number(args[at]);
  out.push(...args.slice(at, at + 1 + 3 * overrides));
  at += 1 + 3 * overrides;
  const leases = Number(args[at]);
  out.push(...args.slice(at + 1, at + 1 + 2 * leases));
  return out;
}

/** The plan of that decision (its override fields and keys, for seeding overrides). */
export function benchPlan(
  engine,
  { tenant, principal, route = 'evaluate', cost = 1, shards = 64, concurrency = false },
) {
  const set = policySet(concurrency);
  const selectors = tenant === undefined ? { principal, route } : { tenant, principal, route };
  // A counter, not a ULID: the ceiling spends nothing it does not have to (a ULID is in the API's cost).
  const decisionId = `01BENCH${String(++sequence).padStart(19, '0')}`;
  const planned = engine.planDecision(
    { selectors, cost },
    { policySet: set, tokenSecret: '', shards, decisionId, only: set.policies[0] },
  );
  if (!planned.ok) throw new Error(`bench decision refused: ${planned.refusal.message}`);
  return planned.plan;
}
