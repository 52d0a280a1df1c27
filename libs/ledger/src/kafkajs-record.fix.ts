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
 * size, and writes the same fields in place: varints byte by byte (kafkajs's `writeUVarInt` makes a
 * Buffer of each one, eight per record), strings with one UTF-8 write at the length measured for the
 * size, header keys and values inline instead of through a sub-encoder, the timestamp delta as the
 * varint it equals when it fits in 30 bits (kafkajs writes 0 for every record without a timestamp). A record it does not recognise (a
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
}

interface EncoderClass {
  prototype: EncoderInstance;
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
  const keyLength = lengthOf(key);
  const valueLength = lengthOf(value);
  if (keyLength === UNKNOWN || valueLength === UNKNOWN) return undefined;
  const names = Object.keys(headers);
  // Per header value: its name, the name's byte length, the value, its byte length.
  const fields: (string | number | Bytes)[] = [];
  let headersSize = 0;
  for (const name of names) {
    const given = headers[name];
    for (const one of Array.isArray(given) ? (given as readonly Bytes[]) : [given as Bytes]) {
      // The original sizes a null header value with Buffer.byteLength, which throws: leave it that.
      if (one === null || one === undefined) return undefined;
      const length = lengthOf(one);
      if (length === UNKNOWN) return undefined;
      const nameLength = Buffer.byteLength(name);
      headersSize += sizeOfVarInt(nameLength) + nameLength + sizeOfVarInt(length) + length;
      fields.push(name, nameLength, one, length);
    }
  }
  const count = fields.length / 4;
  headersSize += sizeOfVarInt(count);
  const body =
    1 +
    sizeOfVarInt(timestampDelta) +
    sizeOfVarInt(offsetDelta) +
    sizeOfVarInt(keyLength) +
    Math.max(keyLength, 0) +
    sizeOfVarInt(valueLength) +
    Math.max(valueLength, 0) +
    headersSize;
  const total = sizeOfVarInt(body) + body;
  // One slice of Node's shared pool for the whole record, written in place: no per-field buffers
  // (kafkajs's own varint writer allocates a Buffer per varint, eight per record).
  const buf = Buffer.allocUnsafe(total);
  let at = putVarInt(buf, 0, body);
  buf[at++] = 0; // attributes
  at = putVarInt(buf, at, timestampDelta);
  at = putVarInt(buf, at, offsetDelta);
  at = putBytes(buf, at, key, keyLength);
  at = putBytes(buf, at, value, valueLength);
  at = putVarInt(buf, at, count);
  for (let i = 0; i < fields.length; i += 4) {
    at = putBytes(buf, at, fields[i] as string, fields[i + 1] as number);
    at = putBytes(buf, at, fields[i + 2] as Bytes, fields[i + 3] as number);
  }
  if (at !== total) throw new Error(`kafkajs record sized ${total} bytes, wrote ${at}`);
  // An encoder over exactly these bytes, as the batch encoder expects from the original.
  const encoder = Object.create(Encoder.prototype) as EncoderInstance;
  encoder.buf = buf;
  encoder.offset = total;
  return encoder;
}

/** A field kafkajs's writer would not take as bytes: the original encodes (or refuses) it. */
const UNKNOWN = -2;

/** The byte length `writeVarIntBytes` prefixes: -1 for null, UNKNOWN for a type left to the original. */
function lengthOf(bytes: Bytes): number {
  if (bytes === null || bytes === undefined) return -1;
  if (typeof bytes === 'string') return Buffer.byteLength(bytes);
  return Buffer.isBuffer(bytes) ? bytes.length : UNKNOWN;
}

/** kafkajs's zig-zag (`encodeZigZag`): 32-bit, so it equals a varlong's below 2^30. */
function zigZag(value: number): number {
  return (value << 1) ^ (value >> 31);
}

function sizeOfVarInt(value: number): number {
  let rest = zigZag(value);
  let bytes = 1;
  while ((rest & 0xffffff80) !== 0) {
    bytes++;
    rest >>>= 7;
  }
  return bytes;
}

/** `writeVarInt`'s bytes at `at`; answers the offset after them. */
function putVarInt(buf: Buffer, at: number, value: number): number {
  let rest = zigZag(value);
  let i = at;
  while ((rest & 0xffffff80) !== 0) {
    buf[i++] = (rest & 0x7f) | 0x80;
    rest >>>= 7;
  }
  buf[i++] = rest & 0x7f;
  return i;
}

/** `writeVarIntBytes`: the length as a varint (-1 for null), then the bytes (a string as UTF-8). */
function putBytes(buf: Buffer, at: number, bytes: Bytes, length: number): number {
  const i = putVarInt(buf, at, length);
  if (bytes === null || bytes === undefined) return i;
  if (typeof bytes === 'string') return i + buf.write(bytes, i, length, 'utf8');
  return i + bytes.copy(buf, i);
}
