import { join } from 'node:path';
import { luaScript, scriptCommand, type RedisClient } from '@tally/redis';

/** The custom command `tallyReseed`, one key per call (lua/reseed.lua). */
const RESEED = luaScript(join(__dirname, '..'), 'reseed.lua', 'tallyReseed', 1);

/** Counts rebuilt from the ledger for one window of a policy state hash (`tally reseed`). */
export interface ReseedWrite {
  /** The policy key's state hash (`policyStateKey`); the window is its field `window`. */
  readonly key: string;
  readonly window: string;
  /** The algorithm's letter (the registry's `letter`): the state format reseed.lua writes. */
  readonly code: string;
  readonly bucket: number;
  /** Units of the current bucket. */
  readonly count: number;
  /** Units of the previous bucket (sliding windows). */
  readonly previous: number;
  /** How long the state must be kept from now, as a commit now would keep it. */
  readonly ttlMs: number;
}

export interface ReseedWritten {
  /** False when Redis already held as much or more (it is never lowered). */
  readonly written: boolean;
  readonly before: number;
  readonly after: number;
  readonly previousBefore: number;
  readonly previousAfter: number;
}

type Command = (key: string, ...args: (string | number)[]) => Promise<unknown[]>;

/**
 * Raises one window's state to at least the rebuilt counts, atomically beside running decisions: the
 * engine writes its own state format, `libs/ops` only says what the ledger counted.
 */
export function reseedWriter(redis: RedisClient): (write: ReseedWrite) => Promise<ReseedWritten> {
  const run = scriptCommand<Command>(redis, RESEED);
  return async (w) => {
    const reply = await run(w.key, w.code, w.bucket, w.count, w.previous, w.ttlMs, w.window);
    const [written, before, after, previousBefore, previousAfter] = reply.map(Number);
    return { written: written === 1, before, after, previousBefore, previousAfter };
  };
}
