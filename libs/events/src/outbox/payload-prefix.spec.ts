import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { DenyReason } from '../deny-reasons';
import { DENIAL_RESULTS_SUFFIX, DENIAL_SAMPLE_SUFFIX } from './outbox-keys';
import { payloadJson } from './payload-json';
import { degradedPayload, deniedPayloadPrefix, PAYLOAD_PREFIX } from './payload-prefix';

/** The decision script, which writes outbox entries and denial samples in Lua. */
const DECIDE_LUA = readFileSync(resolve(__dirname, '../../../engine/src/lua/decide.lua'), 'utf8');

const allowed = payloadJson({
  id: '01JDTESTDECISION0000000000',
  policy_set_version: 'v',
  tenant: 'acme',
  selectors: { tenant: 'acme' },
  attributes: {},
  cost: 2,
  idempotency_key: undefined,
  policies: [],
});

describe('outbox payload heads', () => {
  it('decide.lua holds the same PAYLOAD_PREFIX as TypeScript', () => {
    const lua = /^local PAYLOAD_PREFIX = '(.*)'$/m.exec(DECIDE_LUA);
    expect(lua?.[1]).toBe(PAYLOAD_PREFIX);
    expect(allowed.startsWith(PAYLOAD_PREFIX)).toBe(true);
  });

  it("decide.lua writes a denial's sample as deniedPayloadPrefix + the allowed payload after its prefix", () => {
    // The Lua concatenation, with the reason variable where deniedPayloadPrefix puts the reason.
    const [head, tail] = deniedPayloadPrefix('\u0000' as DenyReason).split('"\\u0000"');
    expect(DECIDE_LUA).toContain(
      `'${head}"' .. reason .. '"${tail}' .. string.sub(payload, #PAYLOAD_PREFIX + 1)`,
    );
    expect(DECIDE_LUA).toContain(`field .. '${DENIAL_SAMPLE_SUFFIX}'`);
    expect(DECIDE_LUA).toContain(`field .. '${DENIAL_RESULTS_SUFFIX}'`);
  });

  it('a denied and a degraded payload decode as the allowed one with their outcome', () => {
    const denied = `${deniedPayloadPrefix('burst_quota_exhausted')}${allowed.slice(PAYLOAD_PREFIX.length)}`;
    const base = JSON.parse(allowed) as Record<string, unknown>;
    expect(JSON.parse(denied)).toEqual({ ...base, outcome: 'denied', reason: 'burst_quota_exhausted' });
    expect(JSON.parse(degradedPayload(allowed, 'backend_timeout'))).toEqual({
      ...base,
      outcome: 'degraded',
      degraded_cause: 'backend_timeout',
    });
  });

  it('refuses to degrade a payload without the allowed prefix', () => {
    expect(() => degradedPayload('{"v":1,"id":"x"}', 'backend_error')).toThrow('allowed prefix');
  });
});
