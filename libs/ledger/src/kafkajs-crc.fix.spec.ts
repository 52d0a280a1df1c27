import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { crc32c, fixKafkajsCrc } from './kafkajs-crc.fix';
import { originalKafkajsModule } from './kafkajs-module.swap';

/* eslint-disable @typescript-eslint/no-require-imports -- kafkajs internals, as the fix reads them */
/** kafkajs's own CRC-32C, read from its file (the require cache may hold the replacement). */
const original = originalKafkajsModule<(buffer: Buffer) => number>('kafkajs/src/protocol/recordBatch/crc32C');

describe(crc32c.name, () => {
  it('is the CRC-32C check value of "123456789" (0xE3069283)', () => {
    expect(crc32c(Buffer.from('123456789'))).toBe(0xe3069283);
  });

  it('gives kafkajs checksum for every length 0..64 and every offset into a pooled buffer', () => {
    const backing = randomBytes(200);
    for (let offset = 0; offset < 9; offset++) {
      for (let length = 0; length <= 64; length++) {
        const slice = backing.subarray(offset, offset + length);
        expect(crc32c(slice), `offset ${offset}, length ${length}`).toBe(original(slice));
      }
    }
  });

  it('gives kafkajs checksum for record-batch sized buffers', () => {
    for (const length of [699, 4096, 70_001, 1 << 20]) {
      const buffer = randomBytes(length);
      expect(crc32c(buffer)).toBe(original(buffer));
    }
    expect(crc32c(Buffer.alloc(1000, 0xff))).toBe(original(Buffer.alloc(1000, 0xff)));
  });
});

describe(fixKafkajsCrc.name, () => {
  it('is in place for the record batch encoder once a Kafka client was created', async () => {
    // given: the ledger's client factory applies the fix before kafkajs loads its record batch
    const { createKafka } = await import('./kafkajs-client.factory');
    createKafka({ clientId: 'spec', brokers: ['127.0.0.1:1'] });
    // then: the checksum the record batch encoder holds is the replacement
    const crc = require('kafkajs/src/protocol/recordBatch/crc32C') as Record<symbol, unknown>;
    expect(crc[Symbol.for('tally.kafkajs.crcFix')]).toBe(true);
    expect(fixKafkajsCrc()).toBe(true);
  });
});
