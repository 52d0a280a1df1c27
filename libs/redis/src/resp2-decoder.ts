/**
 * ioredis 6's reply decoder for the RESP2 replies Tally's connections get (every one speaks RESP2:
 * docs/adr/0003-redis-resp2.md), with the same output. ioredis ships its decoder compiled for ES2015,
 * so each of its private fields and methods is a WeakMap or WeakSet lookup: a read of the cursor, a
 * call of a helper, per byte run and per element. The relay decodes ≈ 600 elements per batch of
 * 100 entries, the decision API a few per decision; this one decodes them 3–4 times faster
 * (resp2-decoder.spec.ts compares both on generated replies cut at every byte).
 *
 * Same values as ioredis's with its RESP2 type mapping: simple and bulk strings as Buffers over the
 * received chunk (or a String where the mapping says so), integers as numbers (strings under
 * `stringNumbers`), `$-1` and `*-1` as null, arrays as arrays, `-ERR …` as a SimpleError, at the top
 * level to `onErrorReply` and inside an array as an element. A reply that starts with a RESP3 type
 * (a connection that sent HELLO 3: its first reply is a map) hands this connection's stream, from
 * that byte on, to ioredis's own decoder, so a RESP3 client in the same process decodes as before.
 */
interface DecoderConfig {
  onReply(reply: unknown): void;
  onErrorReply(error: Error): void;
  onPush(reply: unknown): void;
  getTypeMapping(): Readonly<Record<number, unknown>>;
}

interface DecoderLike {
  write(chunk: Buffer): void;
}

interface DecoderModule {
  Decoder: new (config: DecoderConfig) => DecoderLike;
  RESP_TYPES: Readonly<Record<string, number>>;
}

// A deep import of a pinned package (as lean-pipeline.ts relies on its Pipeline's fields): the spec
// decodes the same bytes with both, so an ioredis upgrade that changes the values fails there.
/* eslint-disable @typescript-eslint/no-require-imports */
const decoderModule = require('ioredis/built/resp/decoder') as DecoderModule;
const { SimpleError } = require('ioredis/built/resp/errors') as {
  SimpleError: new (message: string) => Error;
};
/* eslint-enable @typescript-eslint/no-require-imports */

/** ioredis's own decoder, as found before the swap. */
export const IoredisDecoder = decoderModule.Decoder;

const SIMPLE = 0x2b; // +
const ERROR = 0x2d; // -
const INTEGER = 0x3a; // :
const BULK = 0x24; // $
const ARRAY = 0x2a; // *
const CR = 0x0d;
const LF = 0x0a;
const NUMBER_TYPE = decoderModule.RESP_TYPES.NUMBER;
const SIMPLE_TYPE = decoderModule.RESP_TYPES.SIMPLE_STRING;
const BULK_TYPE = decoderModule.RESP_TYPES.BLOB_STRING;

/** A bulk string split across chunks: its bytes so far, `need` with the trailing CRLF. */
interface PartialBulk {
  readonly need: number;
  readonly chunks: Buffer[];
  have: number;
}

export class Resp2Decoder implements DecoderLike {
  private readonly config: DecoderConfig;
  /** Arrays being filled, innermost last: array, then the index of its next element. */
  private stack: unknown[] = [];
  /** The start of an element whose line has not fully arrived yet. */
  private rest: Buffer | undefined;
  private bulk: PartialBulk | undefined;
  private mapping: Readonly<Record<number, unknown>> = {};
  /** ioredis's decoder, once a RESP3 reply showed up on this connection. */
  private resp3: DecoderLike | undefined;

  constructor(config: DecoderConfig) {
    this.config = config;
  }

  write(chunk: Buffer): void {
    if (this.resp3 !== undefined) return this.resp3.write(chunk);
    const n = chunk.length;
    let i = 0;
    const bulk = this.bulk;
    const rest = this.rest;
    if (bulk !== undefined) {
      const missing = bulk.need - bulk.have;
      if (n < missing) {
        bulk.chunks.push(chunk);
        bulk.have += n;
        return;
      }
      bulk.chunks.push(chunk.subarray(0, missing));
      this.bulk = undefined;
      const whole = Buffer.concat(bulk.chunks, bulk.need);
      this.value(this.text(BULK_TYPE, whole.subarray(0, bulk.need - 2)), false);
      i = missing;
    } else if (rest !== undefined) {
      // The line begun in the previous chunk ends at this chunk's first LF: only that line is
      // copied, and a bulk string's bytes are then read from this chunk itself.
      const lf = chunk.indexOf(LF);
      if (lf === -1) {
        this.rest = Buffer.concat([rest, chunk]);
        return;
      }
      this.rest = undefined;
      const line = Buffer.concat([rest, chunk.subarray(0, lf + 1)]);
      i = this.element(line, 0, line.length - 2, chunk, lf + 1);
      if (i < 0) return;
    }
    while (i < n) {
      const type = chunk[i];
      if (this.stack.length === 0) {
        if (type !== SIMPLE && type !== ERROR && type !== INTEGER && type !== BULK && type !== ARRAY) {
          this.resp3 = new IoredisDecoder(this.config);
          this.resp3.write(chunk.subarray(i));
          return;
        }
        this.mapping = this.config.getTypeMapping();
      }
      const cr = chunk.indexOf(CR, i + 1);
      if (cr === -1 || cr + 1 >= n) {
        this.rest = chunk.subarray(i);
        return;
      }
      i = this.element(chunk, i, cr, chunk, cr + 2);
      if (i < 0) return;
    }
  }

  /**
   * One element whose line is `line[start..cr)` (type byte first); a bulk string's bytes are read
   * from `data` at `from`. Answers where the next element starts in `data`, or -1 when the bulk
   * string continues in later chunks.
   */
  private element(line: Buffer, start: number, cr: number, data: Buffer, from: number): number {
    switch (line[start]) {
      case BULK: {
        if (line[start + 1] === ERROR) {
          this.value(null, false);
          return from;
        }
        const length = digits(line, start + 1, cr);
        const end = from + length;
        const n = data.length;
        if (end + 2 > n) {
          this.bulk = { need: length + 2, chunks: from < n ? [data.subarray(from)] : [], have: n - from };
          return -1;
        }
        this.value(this.text(BULK_TYPE, data.subarray(from, end)), false);
        return end + 2;
      }
      case ARRAY: {
        if (line[start + 1] === ERROR) this.value(null, false);
        else {
          const length = digits(line, start + 1, cr);
          if (length === 0) this.value([], false);
          else this.stack.push(new Array<unknown>(length), 0);
        }
        return from;
      }
      case INTEGER: {
        if (this.mapping[NUMBER_TYPE] === String) {
          this.value(line.toString('utf8', start + 1, cr), false);
          return from;
        }
        const sign = line[start + 1];
        const number = digits(line, sign === ERROR || sign === SIMPLE ? start + 2 : start + 1, cr);
        this.value(sign === ERROR ? -number : number, false);
        return from;
      }
      case SIMPLE:
        this.value(this.text(SIMPLE_TYPE, line.subarray(start + 1, cr)), false);
        return from;
      case ERROR:
        this.value(new SimpleError(line.toString('utf8', start + 1, cr)), true);
        return from;
      default: {
        const type = line[start] ?? 0;
        throw new Error(`Unknown RESP type ${type} "${String.fromCharCode(type)}"`);
      }
    }
  }

  /** A string as the type mapping wants it: the Buffer itself, or its text. */
  private text(type: number, bytes: Buffer): Buffer | string {
    return this.mapping[type] === String ? bytes.toString() : bytes;
  }

  /** Puts a decoded value into the innermost open array, or hands a finished top-level reply over. */
  private value(decoded: unknown, isError: boolean): void {
    const stack = this.stack;
    let value = decoded;
    let error = isError;
    while (stack.length > 0) {
      const top = stack.length - 2;
      const array = stack[top] as unknown[];
      const index = stack[top + 1] as number;
      array[index] = value;
      if (index + 1 < array.length) {
        stack[top + 1] = index + 1;
        return;
      }
      stack.length = top;
      value = array;
      error = false;
    }
    if (error) this.config.onErrorReply(value as Error);
    else this.config.onReply(value);
  }
}

/** The decimal digits from `from` to `to` (exclusive), as ioredis reads them (no sign, no check). */
function digits(bytes: Buffer, from: number, to: number): number {
  let number = 0;
  for (let k = from; k < to; k++) number = number * 10 + bytes[k] - 0x30;
  return number;
}

/** Gives every ioredis connection this process opens from now on the RESP2 decoder; idempotent. */
export function installResp2Decoder(): void {
  decoderModule.Decoder = Resp2Decoder;
}
