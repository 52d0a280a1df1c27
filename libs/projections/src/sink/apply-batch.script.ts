import { defineScript, luaScript, type RedisClient } from '@tally/redis';
import type { BatchStepArgs } from './batch-step';

/** The custom command `tallyProjectionApply`; `numkeys` is its first argument. */
const APPLY_BATCH = luaScript(__dirname, 'apply-batch.lua', 'tallyProjectionApply');

/** What `apply-batch.lua` answered (see its reply legend). */
export type BatchStepReply =
  | { readonly kind: 'applied' }
  | { readonly kind: 'already_applied'; readonly tokens: readonly string[] }
  | { readonly kind: 'refused'; readonly problems: readonly StepProblem[] };

/** A cell (or a whole key) a refused step could not write; nothing of the step was written. */
export interface StepProblem {
  /** 1-based, into the step's KEYS (`BatchStepArgs.keys` / `targets`). */
  readonly keyIndex: number;
  /** The hash field; '' for the whole key (`wrongtype`). */
  readonly field: string;
  readonly kind: StepProblemKind;
  /** The stored value as read ('' when absent or for `wrongtype`). */
  readonly stored: string;
}

export type StepProblemKind = 'overflow' | 'corrupt' | 'wrongtype';
const PROBLEM_KINDS: readonly string[] = ['overflow', 'corrupt', 'wrongtype'] satisfies StepProblemKind[];

/** Registers the command on a client (idempotent per client). */
export function defineApplyBatch(redis: RedisClient): void {
  defineScript(redis, APPLY_BATCH);
}

export async function runApplyBatch(redis: RedisClient, args: BatchStepArgs): Promise<BatchStepReply> {
  const command = (
    redis as unknown as Record<
      string,
      (numKeys: number, keys: readonly string[], argv: readonly (string | number)[]) => Promise<unknown>
    >
  )[APPLY_BATCH.name];
  if (command === undefined) throw new Error('apply-batch.lua is not defined on this client');
  // Passed as arrays, which ioredis flattens: spreading a large step into the call's arguments
  // would overflow the call stack.
  const reply = await command.call(redis, args.keys.length, args.keys, args.argv);
  return parseApplyBatchReply(reply);
}

export function parseApplyBatchReply(reply: unknown): BatchStepReply {
  if (!Array.isArray(reply) || reply.length === 0) throw new Error('apply-batch.lua: malformed reply');
  const [status, ...rest] = reply as unknown[];
  if (status === 0) return { kind: 'applied' };
  if (status === 1) return { kind: 'already_applied', tokens: rest.map(String) };
  if (status === 2 && rest.length > 0 && rest.length % 4 === 0) {
    const problems: StepProblem[] = [];
    for (let i = 0; i < rest.length; i += 4) {
      const [keyIndex, field, kind, stored] = rest.slice(i, i + 4);
      if (typeof keyIndex !== 'number' || !PROBLEM_KINDS.includes(String(kind)))
        throw new Error('apply-batch.lua: malformed problem in reply');
      problems.push({
        keyIndex,
        field: String(field),
        kind: kind as StepProblemKind,
        stored: String(stored),
      });
    }
    return { kind: 'refused', problems };
  }
  throw new Error(`apply-batch.lua: unknown status ${String(status)}`);
}
