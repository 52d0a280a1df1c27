import { status } from '@grpc/grpc-js';

/**
 * The wire of a unary gRPC call over HTTP/2, as the server reads and writes it: a request is exactly
 * one length-prefixed message (1 byte compressed flag, 4 bytes big-endian length, the bytes), an
 * answer is response headers, one such message and trailers with `grpc-status`, or, for a call
 * refused before any answer, one HEADERS frame that carries the status ("trailers-only").
 * Pure: no I/O, no timers.
 */

/** A call ended with a gRPC status other than OK. */
export interface GrpcFailure {
  readonly code: status;
  readonly details: string;
}

/** The encodings a compressed request may use; the answer is never compressed. */
export const ACCEPTED_ENCODINGS = 'identity,deflate,gzip';

const PREFIX_BYTES = 5;

/** The request's one message, taken from the DATA frames of its stream as they arrive. */
export class UnaryMessageReader {
  private readonly chunks: Buffer[] = [];
  private buffered = 0;
  /** Prefix + message, once the prefix is in. */
  private frameBytes = -1;

  constructor(
    private readonly maxMessageBytes: number,
    private readonly path: string,
  ) {}

  /** Bytes received so far. */
  get received(): number {
    return this.buffered;
  }

  /**
   * Adds one DATA frame's bytes. A failure ends the call: a message announced above the limit
   * (refused from its prefix, before its bytes are buffered) or bytes after the first message.
   */
  push(chunk: Buffer): GrpcFailure | undefined {
    this.chunks.push(chunk);
    this.buffered += chunk.length;
    if (this.frameBytes < 0 && this.buffered >= PREFIX_BYTES) {
      const prefix = this.chunks[0].length >= PREFIX_BYTES ? this.chunks[0] : this.joined();
      const length = prefix.readUInt32BE(1);
      if (length > this.maxMessageBytes)
        return {
          code: status.RESOURCE_EXHAUSTED,
          details: `Received message larger than max (${length} vs ${this.maxMessageBytes})`,
        };
      this.frameBytes = PREFIX_BYTES + length;
    }
    if (this.frameBytes >= 0 && this.buffered > this.frameBytes)
      return {
        code: status.UNIMPLEMENTED,
        details: `Received a second request message for unary method ${this.path}`,
      };
    return undefined;
  }

  /** At the end of the request: its message and whether it is compressed, or why there is none. */
  finish(): { readonly compressed: boolean; readonly message: Buffer } | GrpcFailure {
    if (this.buffered === 0)
      return {
        code: status.UNIMPLEMENTED,
        details: `Received no request message for unary method ${this.path}`,
      };
    if (this.frameBytes < 0 || this.buffered < this.frameBytes)
      return {
        code: status.INTERNAL,
        details: `The request ended inside its message (${this.buffered} of ${Math.max(this.frameBytes, PREFIX_BYTES)} bytes)`,
      };
    const frame = this.joined();
    const flag = frame[0];
    if (flag > 1) return { code: status.INTERNAL, details: `Invalid compressed flag ${flag}` };
    return { compressed: flag === 1, message: frame.subarray(PREFIX_BYTES, this.frameBytes) };
  }

  private joined(): Buffer {
    if (this.chunks.length > 1) {
      const one = Buffer.concat(this.chunks, this.buffered);
      this.chunks.length = 0;
      this.chunks.push(one);
    }
    return this.chunks[0];
  }
}

/** One message with its 5-byte prefix (not compressed). */
export function frameMessage(message: Uint8Array): Buffer {
  const frame = Buffer.allocUnsafe(PREFIX_BYTES + message.length);
  frame[0] = 0;
  frame.writeUInt32BE(message.length, 1);
  frame.set(message, PREFIX_BYTES);
  return frame;
}

/** A metadata key's first value (gRPC lets a key repeat; Node gives a repeated header as an array). */
export function firstValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

const TIMEOUT = /^(\d{1,8})([HMSmun])$/;
const UNIT_MS: Readonly<Record<string, number>> = {
  H: 3_600_000,
  M: 60_000,
  S: 1000,
  m: 1,
  u: 1e-3,
  n: 1e-6,
};

/** The longest deadline a Node timer holds (2^31 − 1 ms, ≈ 24.8 days). */
const MAX_DEADLINE_MS = 2 ** 31 - 1;

/**
 * The caller's deadline from `grpc-timeout` (at most 8 digits and a unit: Hours, Minutes, Seconds,
 * milliseconds, microseconds, nanoseconds), in whole milliseconds, at least 1; `undefined` when the
 * header is absent or names more than ≈ 24.8 days (as good as none); a failure when it is malformed.
 */
export function parseGrpcTimeout(header: string | string[] | undefined): number | undefined | GrpcFailure {
  const value = firstValue(header);
  if (value === undefined) return undefined;
  const match = TIMEOUT.exec(value);
  if (match === null) return { code: status.INTERNAL, details: `Invalid grpc-timeout value "${value}"` };
  const ms = Math.max(1, Math.ceil(Number(match[1]) * UNIT_MS[match[2]]));
  return ms > MAX_DEADLINE_MS ? undefined : ms;
}

// Printable ASCII but `%`: what `grpc-message` may carry as it is.
const PLAIN_MESSAGE = /^[\x20-\x24\x26-\x7e]*$/;

/**
 * `grpc-message` as the protocol encodes it: UTF-8, each byte outside printable ASCII and each `%`
 * percent-encoded (what gRPC clients decode).
 */
export function encodeGrpcMessage(details: string): string {
  if (PLAIN_MESSAGE.test(details)) return details;
  let out = '';
  for (const byte of Buffer.from(details, 'utf8'))
    out +=
      byte >= 0x20 && byte <= 0x7e && byte !== 0x25
        ? String.fromCharCode(byte)
        : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  return out;
}
