import { describe, expect, it } from 'vitest';
import { originalKafkajsModule } from './kafkajs-module.swap';
import { encodeRecord, fixKafkajsRecordEncoder } from './kafkajs-record.fix';

/* eslint-disable @typescript-eslint/no-require-imports -- kafkajs internals, as the fix reads them */
type Encoder = { buffer: Buffer };
const EncoderClass = require('kafkajs/src/protocol/encoder') as Parameters<typeof encodeRecord>[0];
/** kafkajs's own record encoder, read from its file (the require cache may hold the replacement). */
const original = originalKafkajsModule<(args: object) => Encoder>(
  'kafkajs/src/protocol/recordBatch/record/v0',
);

const event = '{"specversion":"1.0","id":"01JD5Z8M3KQ7W4X9T2B6N0R1CE","data":{"é":"😀"}}'.repeat(12);
const cases: [string, object][] = [
  [
    'a Tally event record',
    { key: 'acme', value: event, headers: { 'content-type': 'application/cloudevents+json' } },
  ],
  ['Buffer key and value', { key: Buffer.from('t1'), value: Buffer.from(event), offsetDelta: 499 }],
  ['no key, no headers', { key: null, value: 'v', offsetDelta: 3 }],
  ['an empty value', { key: 'k', value: '' }],
  [
    'header arrays and unicode',
    { key: 'ключ', value: event, headers: { a: ['1', Buffer.from('2')], 'b-é': 'x' } },
  ],
  ['a timestamp delta', { key: 'k', value: 'v', timestampDelta: 1234, offsetDelta: 70_000 }],
  ['a negative timestamp delta', { key: 'k', value: 'v', timestampDelta: -5 }],
  ['a delta near 2^30', { key: 'k', value: 'v', timestampDelta: 2 ** 30 - 1 }],
  ['a delta past 2^30 (left to the original)', { key: 'k', value: 'v', timestampDelta: 2 ** 33 + 7 }],
  ['a 70 KiB value', { key: 'k', value: 'x'.repeat(70_000) }],
];

describe(encodeRecord.name, () => {
  it.each(cases)('%s: the bytes kafkajs writes', (_name, args) => {
    const sut = encodeRecord(EncoderClass, args) as unknown as Encoder | undefined;
    const expected = original(args).buffer;
    if (_name.includes('left to the original')) expect(sut).toBeUndefined();
    else expect(sut?.buffer.toString('hex')).toBe(expected.toString('hex'));
  });

  it('leaves a header without a value and a numeric value to the original', () => {
    expect(encodeRecord(EncoderClass, { key: 'k', value: 'v', headers: { a: null } })).toBeUndefined();
    expect(encodeRecord(EncoderClass, { key: 'k', value: 5 } as object)).toBeUndefined();
  });
});

describe(fixKafkajsRecordEncoder.name, () => {
  it('is in place for the produce request once a Kafka client was created', async () => {
    // given: the ledger's client factory applies the fix before kafkajs loads its produce request
    const { createKafka } = await import('./kafkajs-client.factory');
    createKafka({ clientId: 'spec', brokers: ['127.0.0.1:1'] });
    // then: the record encoder the produce request holds is the replacement
    const record = require('kafkajs/src/protocol/recordBatch/record/v0') as Record<symbol, unknown>;
    expect(record[Symbol.for('tally.kafkajs.recordFix')]).toBe(true);
    expect(fixKafkajsRecordEncoder()).toBe(true);
  });
});
