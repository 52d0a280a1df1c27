import { decisionEventFromOutbox, usageEventFromOutbox, type OutboxPayload } from '@tally/events';
import type { LedgerBatch, LedgerRecord } from '@tally/ledger';
import { describe, expect, it } from 'vitest';
import { chunkMessages, deadLetterOf, sortBatch } from './batch-records';

const T0 = Date.parse('2026-11-30T09:00:00Z');
const PAYLOAD: OutboxPayload = {
  v: 1,
  id: '01JD5Z8M3KQ7W4X9T2B6N0R1CA',
  policy_set_version: 'v1',
  tenant: 'acme',
  selectors: { tenant: 'acme' },
  attributes: {},
  cost: 2,
  outcome: 'allowed',
  policies: [{ name: 'p', mode: 'enforce', key: 'k', windows: [] }],
};
const entry = { p: JSON.stringify(PAYLOAD), t: String(T0), r: '[]' };
const usage = JSON.stringify(usageEventFromOutbox(entry));
const decision = JSON.stringify(decisionEventFromOutbox(entry));

function record(offset: number, value: string | null): LedgerRecord {
  return {
    offset: String(offset),
    key: 'acme',
    value: value === null ? null : Buffer.from(value),
    headers: { origin: 'test' },
    timestamp: String(T0),
  };
}

function batch(topic: string, ...records: LedgerRecord[]): LedgerBatch {
  return { topic, partition: 2, highWatermark: '100', records };
}

const TYPES = { usage: 'tally.usage.v1', decision: 'tally.decision.v1' };

describe(sortBatch.name, () => {
  it('keeps valid events in offset order and rejects the rest with their reason', () => {
    const sut = sortBatch(
      batch('usage', record(1, usage), record(2, '{"nope'), record(3, null), record(4, decision)),
      TYPES,
    );
    expect(sut.events.map((e) => e.type)).toEqual(['tally.usage.v1']);
    expect(sut.offsets).toEqual(['1']);
    expect(sut.rejected.map((r) => [r.record.offset, r.reason])).toEqual([
      ['2', 'not JSON'],
      ['3', 'empty message'],
      ['4', 'type: tally.decision.v1 does not belong on usage'],
    ]);
  });

  it('reports every problem of an event that fails validation', () => {
    const broken = JSON.parse(usage) as { data: Record<string, unknown> };
    broken.data.cost = -1;
    const sut = sortBatch(batch('usage', record(5, JSON.stringify(broken))), TYPES);
    expect(sut.rejected[0]?.reason).toContain('data.cost');
  });
});

describe(deadLetterOf.name, () => {
  it('keeps the original bytes, key and headers, and says where the record came from and why', () => {
    const b = batch('usage', record(9, 'garbage'));
    const sut = deadLetterOf(b, { record: b.records[0], reason: 'not JSON' }, 'g1');
    expect(sut).toEqual({
      key: 'acme',
      value: Buffer.from('garbage'),
      headers: {
        origin: 'test',
        'tally-dlq-reason': 'not JSON',
        'tally-dlq-source': 'projector',
        'tally-dlq-group': 'g1',
        'tally-dlq-topic': 'usage',
        'tally-dlq-partition': '2',
        'tally-dlq-offset': '9',
        'tally-dlq-timestamp': String(T0),
      },
    });
  });
});

describe(chunkMessages.name, () => {
  it('splits by size and never splits a single message', () => {
    const m = (n: number) => ({ key: 'k', value: 'x'.repeat(n) });
    const sut = chunkMessages([m(600), m(600), m(5000), m(10)], 1000);
    expect(sut.map((c) => c.map((x) => x.value.length))).toEqual([[600], [600], [5000], [10]]);
    expect(chunkMessages([m(10), m(10)], 1000)).toHaveLength(1);
  });
});
