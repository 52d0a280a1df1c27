// Redis CPU per decision script call, from `INFO commandstats` of the bench's private Redis: EVALSHA's
// usec_per_call (the whole script, the commands it calls included) and XADD's (the outbox append
// inside it). Scripts are measured in interleaved slices (CONFIG RESETSTAT, then `calls` EVALSHAs
// pipelined 100 at a time with the engine's own arguments for 500 principals of the bench policy),
// so the machine's drift hits each alike; the minimum over the slices is the cost with the least
// interference from other processes, the median what a busy machine sees. Private Redis only:
// RESETSTAT would wipe the statistics of a shared one.
// Two workloads: `reused` (the 500 principals again and again: state read and rewritten) and `fresh`
// (a new principal on every call, as distinct tenants in the RLS and HTTP benches and multi-tenant
// traffic: every call creates its keys and their expiry entries, which dominate there). A third,
// `denied` (limits of 1: after a principal's first call every call is denied), prices the denial path,
// which counts a denial instead of writing windows and the outbox.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { benchPlan, decideArgs, decideArgsOneHashPerWindow, legacyArgv } from './decide-args.mjs';
import { ROOT } from './built.mjs';

/** The floor: two windows and an outbox append, nothing else (test/bench/lua/decide.minimal.lua). */
export const MINIMAL_LUA_PATH = join(ROOT, 'test/bench/lua/decide.minimal.lua');
/** The bench decision with decide.lua's guarantees and no other Lua (test/bench/lua/decide.floor.lua). */
export const FLOOR_LUA_PATH = join(ROOT, 'test/bench/lua/decide.floor.lua');

/** The same arguments with every window's limit 1 (ARGV: 6 fixed, then 5 per window, limit second). */
/** `perWindow`: fields per window in ARGV, 5 in the legacy layout (`legacyArgv`), else 6. */
function limitsOfOne(args, perWindow) {
  const keys = Number(args[0]);
  const windows = Number(args[1 + keys + 5]);
  for (let w = 0; w < windows; w++) args[1 + keys + 6 + perWindow * w + 1] = 1;
  return args;
}

function usecPerCall(info, command) {
  const m = new RegExp(`cmdstat_${command}:calls=(\\d+),usec=(\\d+)`).exec(info);
  return m ? Number(m[2]) / Number(m[1]) : 0;
}

const summary = (values) => {
  const s = [...values].sort((a, b) => a - b);
  const r = (x) => Math.round(x * 10) / 10;
  return { min: r(s[0]), median: r(s[Math.floor(s.length / 2)]) };
};

/**
 * Stores a runtime override for each of the bench's 500 principals (limits far above the load, so the
 * figure is the lookup's cost, not a denial's), or removes them: `overrides: true` on a script.
 */
async function seedOverrides(redis, engine, present) {
  const pipeline = redis.pipeline();
  for (let p = 0; p < 500; p++) {
    const plan = benchPlan(engine, { tenant: 'bench', principal: `p${p}` });
    const field = plan.overrideFields[0];
    if (!present) pipeline.hdel(plan.overridesRedisKey, field);
    else {
      const limits = plan.windows.map((w) => `${w.name}=${w.limit * 2}`).join(',');
      pipeline.hset(
        plan.overridesRedisKey,
        field,
        `1;;${limits}\n{"reason":"bench","set_by":"bench","updated_at":0}`,
      );
    }
  }
  await pipeline.exec();
}

/**
 * @param scripts `[{ name, path or lua, concurrency?, overrides?, fresh?, perWindow?, legacy? }]`, each run with
 *   decide.lua's arguments (with `concurrency`, those of the bench policy with a concurrency window
 *   added; with `overrides: true`, while an override of every bench key is stored; with `fresh: true`,
 *   a new principal on every call; with `denied: true`, every window's limit 1 (denials, counted in the
 *   shard's denial hash); with `perWindow: true`, in the layout of one hash per window that
 *   scripts before the policy state hashes take: `decideArgsOneHashPerWindow`).
 * @returns per script `{ name, evalsha: {min, median}, xadd: {min, median} }` in µs per call.
 */
export async function measureScriptCost(redis, engine, scripts, { slices = 15, calls = 2000 } = {}) {
  const loaded = [];
  for (const s of scripts)
    loaded.push({ ...s, sha: await redis.script('LOAD', s.lua ?? readFileSync(s.path, 'utf8')) });
  const samples = loaded.map(() => ({ evalsha: [], xadd: [] }));
  await redis.flushall();
  let fresh = 0;
  for (let k = 0; k < slices; k++) {
    for (let i = 0; i < loaded.length; i++) {
      if (loaded[i].overrides) await seedOverrides(redis, engine, true);
      await redis.config('RESETSTAT');
      // Scripts written before the layout table take its legacy ARGV (`legacyArgv`).
      const legacy = loaded[i].perWindow === true || loaded[i].legacy === true;
      const layout =
        loaded[i].perWindow === true
          ? decideArgsOneHashPerWindow
          : legacy
            ? (e, o) => legacyArgv(decideArgs(e, o))
            : decideArgs;
      const argsOf = loaded[i].denied === true ? (e, o) => limitsOfOne(layout(e, o), legacy ? 5 : 6) : layout;
      for (let n = 0; n < calls; n += 100) {
        const pipeline = redis.pipeline();
        for (let j = 0; j < 100; j++)
          pipeline.evalsha(
            loaded[i].sha,
            ...argsOf(engine, {
              tenant: 'bench',
              principal: loaded[i].fresh === true ? `f${++fresh}` : `p${(n + j) % 500}`,
              concurrency: loaded[i].concurrency === true,
            }),
          );
        const expected = loaded[i].denied === true ? [0, 1] : [1];
        for (const [error, reply] of await pipeline.exec())
          if (error || !expected.includes(reply[0]))
            throw new Error(`${loaded[i].name}: ${String(error ?? reply)}`);
      }
      const info = await redis.info('commandstats');
      if (loaded[i].overrides) await seedOverrides(redis, engine, false);
      samples[i].evalsha.push(usecPerCall(info, 'evalsha'));
      samples[i].xadd.push(usecPerCall(info, 'xadd'));
    }
  }
  await redis.flushall();
  return loaded.map((s, i) => ({
    name: s.name,
    evalsha: summary(samples[i].evalsha),
    xadd: summary(samples[i].xadd),
  }));
}
