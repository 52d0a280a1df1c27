import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Cluster, Redis } from 'ioredis';
import type { BatchStepArgs } from './batch-step';

export type ProjectionRedis = Redis | Cluster;

/** Read once at module load; `npm run build` copies lua/ beside the compiled code. */
export const APPLY_BATCH_LUA = readFileSync(join(__dirname, 'lua', 'apply-batch.lua'), 'utf8');
/** The custom ioredis command: `defineCommand` gives EVALSHA with an EVAL fallback. */
const APPLY_BATCH_COMMAND = 'tallyProjectionApply';

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
export function defineApplyBatch(redis: ProjectionRedis): void {
  if (typeof (redis as unknown as Record<string, unknown>)[APPLY_BATCH_COMMAND] === 'function') return;
  redis.defineCommand(APPLY_BATCH_COMMAND, { lua: APPLY_BATCH_LUA });
}

export async function runApplyBatch(redis: ProjectionRedis, args: BatchStepArgs): Promise<BatchStepReply> {
  const command = (
    redis as unknown as Record<
      string,
      (numKeys: number, keys: readonly string[], argv: readonly (string | number)[]) => Promise<unknown>
    >
  )[APPLY_BATCH_COMMAND];
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
