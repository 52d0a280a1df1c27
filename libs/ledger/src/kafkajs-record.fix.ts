/**
 * kafkajs 2.2.4's encoder of one record (`protocol/recordBatch/record/v0`), replaced by one that
 * writes the same bytes with one buffer per record. The original, per record of a produce request:
 * a zero-filled 512-byte `Buffer.alloc` that a Tally event (≈ 700 bytes) outgrows into a second,
 * 1 KiB one (copied); one more 512-byte encoder per header; the header list built twice; and the
 * timestamp delta's varlong size and bytes computed through a dozen `Long` objects. Measured on
 * 2,000 Tally records, encoding a record batch cost 13 µs CPU per record, the relay's largest single
 * term (docs/adr/0013-kafkajs-record-encoder.md).
 *
 * The replacement sizes the record first (as the original does), takes one pooled buffer of that
 * size, and writes the same fields with the same `Encoder` methods: header keys and values inline
 * instead of through a sub-encoder, the timestamp delta as the varint it equals when it fits in 30
 * bits (kafkajs writes 0 for every record without a timestamp). A record it does not recognise (a
 * key, value or header that is not a string, a Buffer or null; a timestamp delta past 30 bits) is
 * written by the original, so the bytes never differ (kafkajs-record.fix.spec.ts compares both).
 */
import { replaceKafkajsModule } from './kafkajs-module.swap';

const PATCHED = Symbol.for('tally.kafkajs.recordFix');

type Bytes = Buffer | string | null | undefined;
type HeaderValue = Bytes | readonly Bytes[];

interface RecordArgs {
  offsetDelta?: number;
  timestampDelta?: number;
  key?: Bytes;
  value?: Bytes;
  headers?: Readonly<Record<string, HeaderValue>>;
}

interface EncoderInstance {
  buf: Buffer;
  offset: number;
  writeVarInt(value: number): EncoderInstance;
  writeInt8(value: number): EncoderInstance;
  writeVarIntBytes(value: Bytes): EncoderInstance;
  writeVarIntString(value: string): EncoderInstance;
}

interface EncoderClass {
  prototype: EncoderInstance;
  sizeOfVarInt(value: number): number;
}

type RecordEncoder = (args: RecordArgs) => EncoderInstance;

/** Below this a varlong is the varint of the same value (zig-zag, then 7 bits per byte). */
const VARINT_SAFE = 2 ** 30;

/**
 * Applied once per process, before kafkajs loads its produce request encoder (see createKafka).
 * Returns false when that encoder was loaded already (it holds the original): nothing is replaced.
 */
export function fixKafkajsRecordEncoder(): boolean {
  // A deep import of a pinned, unmaintained package (as kafkajs-module.swap.ts): it will not move.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const Encoder = require('kafkajs/src/protocol/encoder') as EncoderClass;
  return replaceKafkajsModule<RecordEncoder>({
    module: 'kafkajs/src/protocol/recordBatch/record/v0',
    heldBy: 'kafkajs/src/protocol/requests/produce/v3/request',
    marker: PATCHED,
    replace: (original) => (args) => encodeRecord(Encoder, args) ?? original(args),
  });
}

/** The record's bytes in one buffer, or undefined when the original must write it. */
export function encodeRecord(Encoder: EncoderClass, args: RecordArgs): EncoderInstance | undefined {
  const { offsetDelta = 0, timestampDelta = 0, key, value, headers = {} } = args;
  if (!Number.isInteger(timestampDelta) || Math.abs(timestampDelta) >= VARINT_SAFE) return undefined;
  const keySize = sizeOfBytes(Encoder, key);
  const valueSize = sizeOfBytes(Encoder, value);
  if (keySize < 0 || valueSize < 0) return undefined;
  const names = Object.keys(headers);
  let count = 0;
  let headersSize = 0;
  for (const name of names) {
    const given = headers[name];
    for (const one of Array.isArray(given) ? (given as readonly Bytes[]) : [given as Bytes]) {
      // The original sizes a null header value with Buffer.byteLength, which throws: leave it that.
      if (one === null || one === undefined) return undefined;
      const size = sizeOfBytes(Encoder, one);
      if (size < 0) return undefined;
      const nameBytes = Buffer.byteLength(name);
      headersSize += Encoder.sizeOfVarInt(nameBytes) + nameBytes + size;
      count++;
    }
  }
  headersSize += Encoder.sizeOfVarInt(count);
  const body =
    1 +
    Encoder.sizeOfVarInt(timestampDelta) +
    Encoder.sizeOfVarInt(offsetDelta) +
    keySize +
    valueSize +
    headersSize;
  const total = Encoder.sizeOfVarInt(body) + body;
  // An encoder over exactly this record's bytes: a slice of Node's shared pool, not a new allocation.
  const encoder = Object.create(Encoder.prototype) as EncoderInstance;
  encoder.buf = Buffer.allocUnsafe(total);
  encoder.offset = 0;
  encoder
    .writeVarInt(body)
    .writeInt8(0)
    .writeVarInt(timestampDelta)
    .writeVarInt(offsetDelta)
    .writeVarIntBytes(key)
    .writeVarIntBytes(value)
    .writeVarInt(count);
  for (const name of names) {
    const given = headers[name];
    for (const one of Array.isArray(given) ? (given as readonly Bytes[]) : [given as Bytes]) {
      encoder.writeVarIntString(name).writeVarIntBytes(one);
    }
  }
  if (encoder.offset !== total)
    throw new Error(`kafkajs record sized ${total} bytes, wrote ${encoder.offset}`);
  return encoder;
}

/** What `writeVarIntBytes` will write (length prefix included), or -1 for a type left to the original. */
function sizeOfBytes(Encoder: EncoderClass, bytes: Bytes): number {
  if (bytes === null || bytes === undefined) return Encoder.sizeOfVarInt(-1);
  const size =
    typeof bytes === 'string' ? Buffer.byteLength(bytes) : Buffer.isBuffer(bytes) ? bytes.length : -1;
  return size < 0 ? -1 : Encoder.sizeOfVarInt(size) + size;
}
