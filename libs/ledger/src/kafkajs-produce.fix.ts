/**
 * kafkajs 2.2.4's produce request body (`protocol/requests/produce/v3/request`, which v4–v7 reuse
 * with another version number), replaced by one that writes the same bytes into one buffer of the
 * request's size. The original builds each partition's record batch through four growing encoders
 * (its body, the batch with its CRC, the record set, the partition), then the topic and the request
 * through two more, each starting at 512 zero-filled bytes and doubling as it goes: a relay request
 * of ≈ 100 records over 12 partitions (≈ 72 KB) allocated and copied ≈ 1 MB.
 *
 * The replacement encodes the records with kafkajs's record encoder (kafkajs-record.fix.ts), sizes
 * every batch from them, and writes headers, records and each batch's CRC-32C (kafkajs's checksum
 * module, kafkajs-crc.fix.ts) in place. What it does not recognise is written by the original, so
 * the bytes never differ (kafkajs-produce.fix.spec.ts compares both): a compressed or transactional
 * request, a message with its own timestamp.
 */
import { fixKafkajsCrc } from './kafkajs-crc.fix';
import { replaceKafkajsModule } from './kafkajs-module.swap';
import { fixKafkajsRecordEncoder } from './kafkajs-record.fix';

const PATCHED = Symbol.for('tally.kafkajs.produceFix');

interface EncoderInstance {
  buf: Buffer;
  offset: number;
}

interface EncoderClass {
  prototype: EncoderInstance;
}

interface LongValue {
  getHighBits(): number;
  getLowBits(): number;
}

interface ProduceMessage {
  readonly timestamp?: unknown;
  readonly [field: string]: unknown;
}

interface PartitionData {
  readonly partition: number;
  readonly firstSequence?: number;
  readonly messages: readonly ProduceMessage[];
}

export interface ProduceArgs {
  readonly acks: number;
  readonly timeout: number;
  readonly transactionalId?: string | null;
  readonly producerId?: unknown;
  readonly producerEpoch?: number;
  readonly compression?: number;
  readonly topicData: readonly { readonly topic: string; readonly partitions: readonly PartitionData[] }[];
}

interface ProduceRequest {
  encode(): Promise<EncoderInstance>;
  [field: string]: unknown;
}

type ProduceRequestFactory = (args: ProduceArgs) => ProduceRequest;

/** What the encoder needs of kafkajs: its Encoder class, record encoder, checksum and Long. */
export interface ProduceEncoding {
  readonly Encoder: EncoderClass;
  readonly record: (args: object) => EncoderInstance;
  readonly crc32C: (buffer: Buffer) => number;
  readonly longOf: (value: unknown) => LongValue;
  /** Date.now, or a fixed clock in tests. */
  readonly now: () => number;
}

/** Bytes of a record batch before its records: int32 epoch, int8 magic, uint32 CRC, 36 of header, int32 count. */
const BATCH_OVERHEAD = 4 + 1 + 4 + 36 + 4;
/** Bytes of the batch header the CRC covers, from the attributes to the record count. */
const CRC_START = 4 + 1 + 4;

/**
 * Applied once per process (see createKafka), before kafkajs loads a produce request of version 4 or
 * above; applies the record encoder's and the checksum's fixes first, since loading the produce
 * request loads both. Returns false when a later version was loaded already (it holds the original).
 */
export function fixKafkajsProduceRequest(): boolean {
  // Loading the produce request below loads its record encoder and checksum: replaced first.
  fixKafkajsRecordEncoder();
  fixKafkajsCrc();
  // Deep imports of a pinned, unmaintained package (as kafkajs-module.swap.ts): they will not move.
  /* eslint-disable @typescript-eslint/no-require-imports */
  const Long = require('kafkajs/src/utils/long') as { fromValue(value: unknown): LongValue };
  const encoding: ProduceEncoding = {
    Encoder: require('kafkajs/src/protocol/encoder') as EncoderClass,
    record: require('kafkajs/src/protocol/recordBatch/record/v0') as ProduceEncoding['record'],
    crc32C: require('kafkajs/src/protocol/recordBatch/crc32C') as ProduceEncoding['crc32C'],
    longOf: (value) => Long.fromValue(value),
    now: () => Date.now(),
  };
  /* eslint-enable @typescript-eslint/no-require-imports */
  return replaceKafkajsModule<ProduceRequestFactory>({
    module: 'kafkajs/src/protocol/requests/produce/v3/request',
    heldBy: 'kafkajs/src/protocol/requests/produce/v4/request',
    marker: PATCHED,
    replace: (original) => (args) => {
      const request = original(args);
      if (!fitsOneBuffer(args)) return request;
      // A promise as kafkajs's encode answers, rejected (not thrown) should the encoder fail.
      const encode = (): Promise<EncoderInstance> =>
        new Promise((resolve) => resolve(encodeProduceRequest(encoding, args)));
      return { ...request, encode };
    },
  });
}

/** A request the one-buffer encoder writes: uncompressed, not transactional, no message timestamps. */
export function fitsOneBuffer(args: ProduceArgs): boolean {
  if ((args.compression ?? 0) !== 0) return false;
  if (args.transactionalId !== undefined && args.transactionalId !== null) return false;
  return args.topicData.every((topic) =>
    topic.partitions.every(
      (p) =>
        p.messages.length > 0 && p.messages.every((m) => m.timestamp === undefined || m.timestamp === null),
    ),
  );
}

/** The produce request body (v3 layout) of `args`, which `fitsOneBuffer` accepted, in one buffer. */
export function encodeProduceRequest(encoding: ProduceEncoding, args: ProduceArgs): EncoderInstance {
  const { acks, timeout, producerId = -1, producerEpoch = 0, topicData } = args;
  const producer = encoding.longOf(producerId);
  // What kafkajs stamps a batch whose messages carry no timestamp with: first = max = now.
  const timestamp = encoding.longOf(encoding.now());
  const topics = topicData.map(({ topic, partitions }) => ({
    topic,
    topicBytes: Buffer.byteLength(topic),
    partitions: partitions.map((data) => {
      const records = data.messages.map((message, i) =>
        encoding.record({ ...message, offsetDelta: i, timestampDelta: 0 }),
      );
      let recordBytes = 0;
      for (const record of records) recordBytes += record.offset;
      return { data, records, batchBytes: BATCH_OVERHEAD + recordBytes };
    }),
  }));
  // transactional_id (null), acks, timeout, topic count; per topic its name and partition count;
  // per partition its number, the record set's size, and the record set: first offset, length, batch.
  let total = 2 + 2 + 4 + 4;
  for (const topic of topics) {
    total += 2 + topic.topicBytes + 4;
    for (const partition of topic.partitions) total += 4 + 4 + 8 + 4 + partition.batchBytes;
  }
  const buf = Buffer.allocUnsafe(total);
  let at = buf.writeInt16BE(-1, 0);
  at = buf.writeInt16BE(acks, at);
  at = buf.writeInt32BE(timeout, at);
  at = buf.writeInt32BE(topics.length, at);
  for (const topic of topics) {
    at = buf.writeInt16BE(topic.topicBytes, at);
    at += buf.write(topic.topic, at, 'utf8');
    at = buf.writeInt32BE(topic.partitions.length, at);
    for (const { data, records, batchBytes } of topic.partitions) {
      at = buf.writeInt32BE(data.partition, at);
      at = buf.writeInt32BE(8 + 4 + batchBytes, at); // the record set: first offset, length, batch
      at = buf.writeInt32BE(0, at); // first offset, int64 0
      at = buf.writeInt32BE(0, at);
      at = buf.writeInt32BE(batchBytes, at);
      const batch = at;
      at = buf.writeInt32BE(0, at); // partition leader epoch
      at = buf.writeInt8(2, at); // magic
      at += 4; // CRC, once the rest is written
      at = buf.writeInt16BE(0, at); // attributes: no compression, create time, not transactional
      at = buf.writeInt32BE(records.length - 1, at); // last offset delta
      at = buf.writeInt32BE(timestamp.getHighBits(), at); // first timestamp
      at = buf.writeInt32BE(timestamp.getLowBits(), at);
      at = buf.writeInt32BE(timestamp.getHighBits(), at); // max timestamp
      at = buf.writeInt32BE(timestamp.getLowBits(), at);
      at = buf.writeInt32BE(producer.getHighBits(), at);
      at = buf.writeInt32BE(producer.getLowBits(), at);
      at = buf.writeInt16BE(producerEpoch, at);
      at = buf.writeInt32BE(data.firstSequence ?? 0, at);
      at = buf.writeInt32BE(records.length, at);
      for (const record of records) at += record.buf.copy(buf, at, 0, record.offset);
      buf.writeUInt32BE(encoding.crc32C(buf.subarray(batch + CRC_START, at)), batch + 5);
    }
  }
  if (at !== total) throw new Error(`kafkajs produce request sized ${total} bytes, wrote ${at}`);
  const encoder = Object.create(encoding.Encoder.prototype) as EncoderInstance;
  encoder.buf = buf;
  encoder.offset = total;
  return encoder;
}
