import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { RedisClient } from './redis-connection';

/** A Lua script registered as a custom ioredis command: `defineCommand` gives EVALSHA with an EVAL fallback. */
export interface LuaScript {
  /** The command's name on the client. */
  readonly name: string;
  readonly lua: string;
  /** Fixed number of KEYS; absent when the caller passes `numkeys` as the first argument. */
  readonly numberOfKeys?: number;
}

/**
 * Reads `<dir>/lua/<file>` once (call it at module load with `__dirname`): the scripts live beside
 * the TypeScript that calls them, and `npm run build` copies lua/ beside the compiled code.
 */
export function luaScript(dir: string, file: string, name: string, numberOfKeys?: number): LuaScript {
  const lua = readFileSync(join(dir, 'lua', file), 'utf8');
  return numberOfKeys === undefined ? { name, lua } : { name, lua, numberOfKeys };
}

/** Registers the script on a client (idempotent per client). */
export function defineScript(redis: RedisClient, script: LuaScript): void {
  if (typeof (redis as unknown as Record<string, unknown>)[script.name] === 'function') return;
  redis.defineCommand(
    script.name,
    script.numberOfKeys === undefined
      ? { lua: script.lua }
      : { lua: script.lua, numberOfKeys: script.numberOfKeys },
  );
}

/** The script's command on a client, bound to it; defines it first if needed. */
export function scriptCommand<F extends (...args: never[]) => Promise<unknown>>(
  redis: RedisClient,
  script: LuaScript,
): F {
  defineScript(redis, script);
  return (redis as unknown as Record<string, F>)[script.name].bind(redis) as F;
}
