import { describe, expect, it } from 'vitest';
import type { ScriptOutcome } from '../decide.script';
import { fallsShort } from './replica-wait';

const at = { nowMs: 1, retryAfterMs: 0, binding: 0, windows: [] };
const outcomes: Record<ScriptOutcome['kind'], ScriptOutcome> = {
  allowed: { kind: 'allowed', ...at },
  denied: { kind: 'denied', ...at },
  peek: { kind: 'peek', ...at },
  replayed: { kind: 'replayed', nowMs: 1, storedPayload: '{}', windows: [] },
  conflict: { kind: 'conflict', nowMs: 1 },
};

describe(fallsShort.name, () => {
  const wait = { replicas: 2, timeoutMs: 100 };

  it.each([
    ['allowed', 0, true],
    ['allowed', 1, true],
    ['allowed', 2, false],
    ['allowed', 3, false],
    // a replay answers "allowed" for writes that may be on the master alone: held back the same way
    ['replayed', 0, true],
    ['replayed', 1, true],
    ['replayed', 2, false],
    // nothing of the ledger to lose: answered whatever WAIT counted
    ['denied', 0, false],
    ['peek', 0, false],
    ['conflict', 0, false],
  ] as const)('%s with %i of 2 replicas acknowledged → refused: %s', (kind, acknowledged, refused) => {
    expect(fallsShort(outcomes[kind], acknowledged, wait)).toBe(refused);
  });
});
