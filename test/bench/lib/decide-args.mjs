// The EVALSHA arguments of a two-window decision, built the way the engine builds them
// (decide.script.ts `decideArgs` over decision-plan.ts `planDecision`), with the engine's own key
// builders. The engine does not export decideArgs, so its legend order is mirrored here: a change of
// the script's KEYS/ARGV legend must be mirrored too (the sanity check of the run catches a mismatch).

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

export function benchPolicyYaml() {
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
    '    max_cost: 100',
    '    on_backend_failure: fail_closed',
    '',
  ].join('\n');
}

/** A stand-in of the request fingerprint: same length as the engine's SHA-256 hex. */
const FINGERPRINT = 'f'.repeat(64);
const POLICY_SET_VERSION = '0123456789ab';
let sequence = 0;

/**
 * `[numkeys, ...KEYS, ...ARGV]` for one decision of `cost` by `principal` of `tenant` on the bench
 * policy, no idempotency key, Redis clock. The outbox payload has the shape and size of the engine's.
 */
export function decideArgs(engine, { tenant, principal, route = 'evaluate', cost = 1, shards = 64 }) {
  const { name, burst, sustained } = BENCH_POLICY;
  const shard = engine.shardKeys(engine.shardOf(tenant, shards));
  const scope = engine.encodeScope(tenant);
  const key = principal;
  // A counter, not a ULID: the ceiling spends nothing it does not have to (a ULID is in the API's cost).
  const id = `01BENCH${String(++sequence).padStart(19, '0')}`;
  const payload = JSON.stringify({
    v: 1,
    outcome: 'allowed',
    id,
    policy_set_version: POLICY_SET_VERSION,
    tenant,
    selectors: { tenant, principal, route },
    attributes: {},
    cost,
    policies: [
      {
        name,
        mode: 'enforce',
        key,
        windows: [
          { name: burst.name, role: 'burst', limit: burst.limit },
          { name: sustained.name, role: 'sustained', limit: sustained.limit },
        ],
      },
    ],
  });
  return [
    4,
    shard.outbox,
    shard.denials,
    engine.windowKey(shard, scope, name, burst.name, key),
    engine.windowKey(shard, scope, name, sustained.name, key),
    '',
    cost,
    0,
    FINGERPRINT,
    payload,
    2,
    burst.code,
    burst.limit,
    burst.periodMs,
    0,
    `${name}|${key}|burst_quota_exhausted`,
    sustained.code,
    sustained.limit,
    sustained.periodMs,
    0,
    `${name}|${key}|sustained_quota_exhausted`,
  ];
}
