// The ledger under the steady bench: one relay ships at a time. Each Tally build (this one, a
// baseline) has its own relay on the one stack; the relays not in use are stopped with SIGSTOP (no
// CPU, no Redis reads) and the one in use is continued with SIGCONT. "Ledger paused" stops the one in
// use too: the API keeps appending outbox entries, the broker idles. Before any measurement the relay
// of the build under test ships what is left in the outbox (its own API's entries: every switch
// drains first), so no measurement pays for another's backlog. A paused measurement's backlog (up to
// 100,000 entries at saturation) is trimmed instead, not shipped: a relay that drained it ran on the
// heap the drain grew and cost 26–40 µs per decision where the same code that had not cost 44–51, and
// only one build's relay would have had it (docs/benchmarks.md, "Steady rate").
import { loadEngine } from './built.mjs';
import { outboxDrained } from './outbox-fill.mjs';

/**
 * `relays`: `{ tally: pid, baseline?: pid }`; `redis`: the stack's Redis, `shards` outbox streams.
 * Starts with `tally`'s relay in use and the others stopped.
 */
export function ledgerControl(relays, redis, shards) {
  const engine = loadEngine();
  const stopped = new Set();
  const signal = (name, stop) => {
    if (stop === stopped.has(name)) return;
    process.kill(relays[name], stop ? 'SIGSTOP' : 'SIGCONT');
    if (stop) stopped.add(name);
    else stopped.delete(name);
  };
  let current = 'tally';
  for (const name of Object.keys(relays)) signal(name, name !== current);
  const drained = () => outboxDrained(redis, engine, shards, 300_000);
  let paused = false;
  /** Every outbox stream emptied while its relay is stopped; answers how many entries went. */
  const trim = async () => {
    const pipeline = redis.pipeline();
    for (const keys of engine.allShardKeys(shards)) pipeline.xtrim(keys.outbox, 'MAXLEN', 0);
    return ((await pipeline.exec()) ?? []).reduce((n, [error, count]) => n + (error ? 0 : Number(count)), 0);
  };
  return {
    /**
     * `name`'s relay running, the others stopped, the outbox empty; after a paused measurement, its
     * backlog trimmed. Answers the entries trimmed.
     */
    async use(name) {
      const trimmed = paused ? await trim() : 0;
      paused = false;
      signal(current, false);
      await drained();
      for (const other of Object.keys(relays)) signal(other, other !== name);
      current = name;
      return trimmed;
    },
    /** The relay in use stopped too (the ledger paused); the next `use` trims what it left. */
    pause() {
      signal(current, true);
      paused = true;
    },
    /** Every relay continued: a stopped process would not even see the cleanup's SIGTERM. */
    resumeAll() {
      for (const name of Object.keys(relays)) signal(name, false);
    },
  };
}
