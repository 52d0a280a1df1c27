import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  encodeProduceRequest,
  fitsOneBuffer,
  fixKafkajsProduceRequest,
  type ProduceArgs,
  type ProduceEncoding,
} from './kafkajs-produce.fix';
import { originalKafkajsModule as fresh } from './kafkajs-module.swap';

/* eslint-disable @typescript-eslint/no-require-imports -- kafkajs internals, as the fix reads them */
type Encoded = { buffer: Buffer };
type Factory = (args: ProduceArgs) => { encode(): Promise<Encoded> };

const original = fresh<Factory>('kafkajs/src/protocol/requests/produce/v3/request');
const NOW = 1_764_777_600_123;
const encoding: ProduceEncoding = {
  Encoder: require('kafkajs/src/protocol/encoder') as ProduceEncoding['Encoder'],
  record: fresh<ProduceEncoding['record']>('kafkajs/src/protocol/recordBatch/record/v0'),
  crc32C: fresh<ProduceEncoding['crc32C']>('kafkajs/src/protocol/recordBatch/crc32C'),
  longOf: (value) => (require('kafkajs/src/utils/long') as { fromValue(v: unknown): never }).fromValue(value),
  now: () => NOW,
};

/** The first offset where two buffers differ (-1: the same bytes), a short failure for 72 KB. */
function firstDifference(a: Buffer, b: Buffer): number {
  for (let i = 0; i < Math.max(a.length, b.length); i++) if (a[i] !== b[i]) return i;
  return -1;
}

const event = (i: number) =>
  `{"specversion":"1.0","id":"01JD5Z8M3KQ7W4X9T2B6N0R1C${i % 10}","data":{"tenant":"t-${i}","é":"😀"}}`.repeat(
    8,
  );
const headers = { 'content-type': 'application/cloudevents+json' };

/** A relay's request: 12 partitions of `perPartition` records each, keyed by tenant. */
function relayLike(perPartition: number, topic = 'tally.usage.v1') {
  return {
    topic,
    partitions: Array.from({ length: 12 }, (_, partition) => ({
      partition,
      firstSequence: partition * 1000 + 7,
      messages: Array.from({ length: perPartition }, (_, i) => ({
        key: `tenant-${partition}-${i}`,
        value: event(i),
        headers,
      })),
    })),
  };
}

const cases: [string, ProduceArgs][] = [
  [
    'a relay request (12 partitions × 8 records, idempotent producer)',
    {
      acks: -1,
      timeout: 30_000,
      producerId: '4611686018427387999',
      producerEpoch: 3,
      topicData: [relayLike(8)],
    },
  ],
  ['no producer id (the default, -1)', { acks: 1, timeout: 5_000, topicData: [relayLike(1)] }],
  [
    'two topics, one record of 70 KiB, a Buffer value, no key',
    {
      acks: -1,
      timeout: 30_000,
      producerId: 42,
      producerEpoch: 0,
      topicData: [
        relayLike(2),
        {
          topic: 'tally.decision.v2',
          partitions: [
            { partition: 3, messages: [{ key: 'k', value: 'x'.repeat(70_000) }] },
            { partition: 0, firstSequence: 2 ** 31 - 1, messages: [{ key: null, value: Buffer.from('v') }] },
          ],
        },
      ],
    },
  ],
];

afterEach(() => {
  vi.restoreAllMocks();
});

describe(encodeProduceRequest.name, () => {
  it.each(cases)('%s: the bytes kafkajs writes', async (_name, args) => {
    // given: kafkajs's clock stopped where the replacement's is
    vi.spyOn(Date, 'now').mockReturnValue(NOW);
    expect(fitsOneBuffer(args)).toBe(true);

    const sut = encodeProduceRequest(encoding, args) as unknown as Encoded;

    const expected = (await original(args).encode()).buffer;
    expect(sut.buffer.length).toBe(expected.length);
    expect(firstDifference(sut.buffer, expected)).toBe(-1);
  });

  it('leaves compressed, transactional, timestamped and empty requests to the original', () => {
    const base = { acks: -1, timeout: 30_000, topicData: [relayLike(1)] };
    const with1 = (message: Record<string, unknown>) => ({
      ...base,
      topicData: [{ topic: 't', partitions: [{ partition: 0, messages: [message] }] }],
    });
    expect(fitsOneBuffer({ ...base, compression: 1 })).toBe(false);
    expect(fitsOneBuffer({ ...base, transactionalId: 'tx' })).toBe(false);
    expect(fitsOneBuffer(with1({ key: 'k', value: 'v', timestamp: NOW }))).toBe(false);
    expect(
      fitsOneBuffer({ ...base, topicData: [{ topic: 't', partitions: [{ partition: 0, messages: [] }] }] }),
    ).toBe(false);
    expect(fitsOneBuffer({ ...base, compression: 0, transactionalId: null })).toBe(true);
  });
});

describe(fixKafkajsProduceRequest.name, () => {
  it('is in place for every produce request version once a Kafka client was created', async () => {
    // given: the ledger's client factory applies the fix before kafkajs loads a produce request
    const { createKafka } = await import('./kafkajs-client.factory');
    createKafka({ clientId: 'spec', brokers: ['127.0.0.1:1'] });

    // then: version 7's request (the relay's) encodes through the replacement, byte for byte
    const v3 = require('kafkajs/src/protocol/requests/produce/v3/request') as Record<symbol, unknown>;
    expect(v3[Symbol.for('tally.kafkajs.produceFix')]).toBe(true);
    expect(fixKafkajsProduceRequest()).toBe(true);
    vi.spyOn(Date, 'now').mockReturnValue(NOW);
    const v7 = require('kafkajs/src/protocol/requests/produce/v7/request') as (args: ProduceArgs) => {
      apiVersion: number;
      encode(): Promise<Encoded>;
    };
    const args = cases[0][1];
    const request = v7(args);
    const encoded = (await request.encode()) as Encoded & { buf: Buffer; offset: number };
    expect(request.apiVersion).toBe(7);
    expect(firstDifference(encoded.buffer, (await original(args).encode()).buffer)).toBe(-1);
    // kafkajs's own encoder grows by powers of two; the replacement's buffer is the request's size
    expect(encoded.buf.length).toBe(encoded.offset);
  });
});
