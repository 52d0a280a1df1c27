// Bytes of JavaScript heap allocated per call by each pure step of one decision's call path, from
// the built tree (BENCH_DIST selects another build, for before/after): the plan, the script's
// arguments, the reply's decoding, the decision, and the Envoy RLS mapping on both sides. Printed,
// not asserted. A young generation large enough that no scavenge runs during a measurement makes
// the new space's growth over N calls the bytes those calls allocated (a measurement during which a
// scavenge ran is refused and said so).
// Run: node --max-semi-space-size=256 --min-semi-space-size=256 test/bench/hot-path-alloc.mjs
import { getHeapSpaceStatistics } from 'node:v8';
import { loadBuilt } from './lib/built.mjs';
import { benchPolicyYaml } from './lib/decide-args.mjs';

const CALLS = 20_000;
const { planDecision } = loadBuilt('libs/engine/src/plan/decision-plan.js');
const { decideArgs, parseDecideReply } = loadBuilt('libs/engine/src/decide.script.js');
const { scriptDecision } = loadBuilt('libs/engine/src/plan/decision-result.js');
const { toDecisionRequests, toRlsOutcome } = loadBuilt('libs/envoy-rls/src/index.js');
const compiled = loadBuilt('libs/policy/src/index.js').compilePolicyFile(benchPolicyYaml());
if (!compiled.ok) throw new Error(JSON.stringify(compiled.errors));
const policySet = compiled.set;

const newSpaceUsed = () => getHeapSpaceStatistics().find((s) => s.space_name === 'new_space').space_used_size;

/** Bytes per call of `step`, its inputs made beforehand (they are not the step's allocations). */
function bytesPerCall(name, makeInput, step) {
  for (let i = 0; i < 5_000; i++) step(makeInput(i)); // optimized code, as in a warm API
  const inputs = Array.from({ length: CALLS }, (_, i) => makeInput(i));
  const keep = new Array(CALLS);
  const before = newSpaceUsed();
  for (let i = 0; i < CALLS; i++) keep[i] = step(inputs[i]);
  const after = newSpaceUsed();
  if (after < before) return `${name}: a scavenge ran, no figure (give a larger --max-semi-space-size)`;
  return `${name.padEnd(34)} ${Math.round((after - before) / CALLS)} B per call`;
}

const ctx = (i) => ({
  policySet,
  tokenSecret: 'alloc-secret',
  shards: 64,
  maxCost: 1_000_000,
  decisionId: `01ALLOC${String(i).padStart(19, '0')}`,
});
const request = (i) => ({ selectors: { tenant: 'bench', principal: `p-${i}`, route: 'evaluate' }, cost: 1 });
const plan = (i) => planDecision(request(i), ctx(i)).plan;
const reply = () => [1, 1764669600000, 0, 0, '', 2, 9_999_999, 100, 0, 9_999_999_999, 60_000, 0, 0, 0];
const outcome = () => parseDecideReply(reply(), 2);
const rls = (i) => ({
  domain: 'bench',
  descriptors: [
    {
      entries: [
        { key: 'route', value: 'evaluate' },
        { key: 'principal', value: `p-${i}` },
      ],
    },
  ],
});
const rlsContext = {
  xRateLimitHeaders: false,
  windowOf: (p, w) => policySet.policies.find((x) => x.name === p).windows.find((x) => x.name === w),
};

const lines = [
  bytesPerCall(
    'planDecision',
    (i) => [request(i), ctx(i)],
    ([r, c]) => planDecision(r, c),
  ),
  bytesPerCall(
    'planDecision (RLS descriptor)',
    (i) => [toDecisionRequests(rls(i), { maxDescriptors: 8 }).requests[0], ctx(i)],
    ([r, c]) => planDecision(r, c),
  ),
  bytesPerCall('decideArgs', plan, (p) => decideArgs(p, 0)),
  bytesPerCall('parseDecideReply', reply, (r) => parseDecideReply(r, 2)),
  bytesPerCall(
    'scriptDecision',
    (i) => [plan(i), outcome()],
    ([p, o]) => scriptDecision(p, o),
  ),
  bytesPerCall('toDecisionRequests (RLS)', rls, (r) => toDecisionRequests(r, { maxDescriptors: 8 })),
  bytesPerCall(
    'toRlsOutcome (RLS)',
    (i) => [scriptDecision(plan(i), outcome())],
    (d) => toRlsOutcome(d, rlsContext),
  ),
];
process.stdout.write(`${lines.join('\n')}\n`);
