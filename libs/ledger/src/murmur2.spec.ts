import { randomBytes } from 'node:crypto';
import { Partitioners } from 'kafkajs';
import { describe, expect, it } from 'vitest';
import { murmur2 } from './murmur2';
import { keyPartition } from './kafkajs-ledger.producer';

/* eslint-disable @typescript-eslint/no-require-imports -- kafkajs's own hash, the reference */
const reference = require('kafkajs/src/producer/partitioners/default/murmur2') as (key: string) => number;

const keys = [
  '',
  'a',
  'ab',
  'abc',
  'abcd',
  'acme',
  't1',
  't999',
  'ключ',
  'é😀',
  'x'.repeat(1023),
  'x'.repeat(1024),
  'é'.repeat(600),
  ...Array.from({ length: 500 }, (_, i) => randomBytes(1 + (i % 70)).toString(i % 2 ? 'base64' : 'latin1')),
];

describe(murmur2.name, () => {
  it('is the Java client\'s value for "21" (Kafka\'s UtilsTest)', () => {
    expect(murmur2('21')).toBe(-973932308);
  });

  it("is kafkajs's hash for every length, unicode, and keys past the scratch buffer", () => {
    for (const key of keys) expect(murmur2(key), JSON.stringify(key)).toBe(reference(key));
  });
});

describe(keyPartition.name, () => {
  it("chooses kafkajs's default partition for a keyed message", () => {
    const partitionMetadata = Array.from({ length: 12 }, (_, partitionId) => ({
      partitionId,
      leader: 1,
      partitionErrorCode: 0,
      replicas: [1],
      isr: [1],
    }));
    const kafkajs = Partitioners.DefaultPartitioner();
    for (const key of keys) {
      const message = { key, value: 'v' };
      expect(keyPartition(key, 12), JSON.stringify(key)).toBe(
        kafkajs({ topic: 't', partitionMetadata, message }),
      );
    }
  });
});
