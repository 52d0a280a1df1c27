// Where the time goes in a V8 .cpuprofile (from BENCH_PROFILE=1): self time by package / source
// file, the heaviest functions, and inclusive time (a function and everything it calls, each stack
// counted once) of the project's own code and the request pipeline.
// Usage: node test/bench/profile-summary.mjs FILE.cpuprofile [top=25] [skipSeconds=0]
// (skipSeconds drops the first seconds of samples: boot and module loading are not the hot path).
import { readFileSync } from 'node:fs';

const [file, topArg, skipArg] = process.argv.slice(2);
if (!file) {
  process.stderr.write('usage: node test/bench/profile-summary.mjs FILE.cpuprofile [top]\n');
  process.exit(2);
}
const top = Number(topArg ?? 25);
const skipUs = Number(skipArg ?? 0) * 1e6;
const profile = JSON.parse(readFileSync(file, 'utf8'));
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
// Sample i's weight is its time delta; samples before `skipUs` weigh nothing.
const weights = [];
let elapsed = 0;
for (let i = 0; i < profile.samples.length; i++) {
  elapsed += profile.timeDeltas[i] ?? 0;
  weights.push(elapsed < skipUs ? 0 : (profile.timeDeltas[i] ?? 0));
}
const self = new Map();
for (let i = 0; i < profile.samples.length; i++) {
  const dt = weights[i];
  self.set(profile.samples[i], (self.get(profile.samples[i]) ?? 0) + dt);
}
const total = [...self.values()].reduce((a, b) => a + b, 0);

function area(url) {
  if (!url) return '(native/gc/idle)';
  const nm = url.lastIndexOf('node_modules/');
  if (nm >= 0) {
    const rest = url.slice(nm + 'node_modules/'.length).split('/');
    return rest[0].startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0];
  }
  const dist = url.indexOf('/dist/');
  if (dist >= 0) return url.slice(dist + 1);
  return url.startsWith('node:') ? url : url.replace(/^file:\/\//, '');
}

const byArea = new Map();
const byFn = new Map();
for (const [id, us] of self) {
  const { callFrame: f } = byId.get(id);
  const a = area(f.url);
  byArea.set(a, (byArea.get(a) ?? 0) + us);
  const name = `${f.functionName || '(anonymous)'}  ${a}:${f.lineNumber + 1}`;
  byFn.set(name, (byFn.get(name) ?? 0) + us);
}
// Inclusive: walk each sample's stack once; a function on the stack twice (recursion) counts once.
const parent = new Map();
for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
const inclusive = new Map();
const fnKey = (id) => {
  const { callFrame: f } = byId.get(id);
  return `${f.functionName || '(anonymous)'}  ${area(f.url)}:${f.lineNumber + 1}`;
};
for (let i = 0; i < profile.samples.length; i++) {
  const dt = weights[i];
  if (dt === 0) continue;
  const seen = new Set();
  for (let id = profile.samples[i]; id !== undefined; id = parent.get(id)) {
    const { callFrame: f } = byId.get(id);
    if (!/dist\/|@nestjs|class-validator|class-transformer|ulid|fastify|ioredis|prom-client/.test(f.url))
      continue;
    const k = fnKey(id);
    if (seen.has(k)) continue;
    seen.add(k);
    inclusive.set(k, (inclusive.get(k) ?? 0) + dt);
  }
}

const pct = (us) => `${((100 * us) / total).toFixed(1).padStart(5)}%`;
const print = (title, map) => {
  process.stdout.write(`\n${title}\n`);
  for (const [k, us] of [...map].sort((a, b) => b[1] - a[1]).slice(0, top))
    process.stdout.write(`${pct(us)}  ${k}\n`);
};
process.stdout.write(`${file}: ${(total / 1e6).toFixed(1)} s sampled\n`);
print('self time by area', byArea);
print('self time by function', byFn);
print('inclusive time (project code and the request pipeline)', inclusive);
