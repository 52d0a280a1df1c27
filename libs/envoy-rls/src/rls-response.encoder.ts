import type { RlsCode, RlsDescriptorStatus, RlsHeaderValue, RlsResponse, RlsUnit } from './rls.types';

/**
 * `RateLimitResponse` in protobuf's wire format, written in one pass into a buffer of its size, for
 * every answer of `ShouldRateLimit`. The bytes are those protobufjs writes for the same object
 * (`fromObject`, then `encode`: fields in number order, a field present in the object written even
 * at its zero value, one absent or null left out, `uint32`s taken `>>> 0`), without its message
 * objects, its writer's list of operations and the copy `finish` makes of them
 * (rls-response.encoder.spec.ts compares both on generated answers).
 *
 * Answers undefined for what it does not write the same way, and the caller then uses protobufjs:
 * a string with a character outside ASCII (protobufjs and Node write lone surrogates differently;
 * Tally's names and header values are ASCII), an enum name it does not know, a duration whose
 * seconds or nanos are not non-negative integers Number holds exactly, a `limit_remaining` or
 * `requests_per_unit` that is not a finite number, a repeated field that is not an array.
 */
export function encodeRlsResponse(response: RlsResponse): Buffer | undefined {
  const statuses = response.statuses as unknown;
  const headers = response.response_headers_to_add as unknown;
  if (!absent(statuses) && !Array.isArray(statuses)) return undefined;
  if (!absent(headers) && !Array.isArray(headers)) return undefined;
  const overall = enumValue(CODES, response.overall_code);
  if (overall === INVALID) return undefined;

  // Sizes first, kept for the write pass: per status its body, its limit's and its duration's.
  const statusSizes: number[] = [];
  const headerSizes: number[] = [];
  let size = overall === ABSENT ? 0 : 1 + varintSize(overall);
  for (const status of (statuses ?? []) as readonly RlsDescriptorStatus[]) {
    const body = statusSize(status, statusSizes);
    if (body < 0) return undefined;
    size += 1 + varintSize(body) + body;
  }
  for (const header of (headers ?? []) as readonly RlsHeaderValue[]) {
    const body = headerSize(header);
    if (body < 0) return undefined;
    headerSizes.push(body);
    size += 1 + varintSize(body) + body;
  }

  const out = Buffer.allocUnsafe(size);
  let at = 0;
  if (overall !== ABSENT) {
    out[at++] = 0x08;
    at = writeVarint(out, at, overall);
  }
  let i = 0;
  for (const status of (statuses ?? []) as readonly RlsDescriptorStatus[]) {
    out[at++] = 0x12;
    at = writeVarint(out, at, statusSizes[i]);
    at = writeStatus(out, at, status, statusSizes[i + 1], statusSizes[i + 2]);
    i += 3;
  }
  i = 0;
  for (const header of (headers ?? []) as readonly RlsHeaderValue[]) {
    out[at++] = 0x1a;
    at = writeVarint(out, at, headerSizes[i++]);
    at = writeString(out, writeString(out, at, 0x0a, header.key), 0x12, header.value);
  }
  return at === size ? out : undefined;
}

const CODES: Readonly<Record<RlsCode, number>> = { UNKNOWN: 0, OK: 1, OVER_LIMIT: 2 };
const UNITS: Readonly<Record<RlsUnit, number>> = {
  UNKNOWN: 0,
  SECOND: 1,
  MINUTE: 2,
  HOUR: 3,
  DAY: 4,
  MONTH: 5,
  YEAR: 6,
};
/** Unset, as protobufjs's `fromObject` sees a field: absent or null. */
function absent(value: unknown): value is undefined | null {
  return value === undefined || value === null;
}

/** A field absent from the object (protobufjs leaves it out). */
const ABSENT = -1;
/** A value this encoder does not write as protobufjs does. */
const INVALID = -2;

function enumValue(names: Readonly<Record<string, number>>, name: unknown): number {
  if (absent(name)) return ABSENT;
  return typeof name === 'string' && Object.hasOwn(names, name) ? names[name] : INVALID;
}

/** `uint32` as protobufjs's `fromObject` makes it (`>>> 0`); INVALID for what it would not. */
function uint32(value: unknown): number {
  if (absent(value)) return ABSENT;
  return typeof value === 'number' && Number.isFinite(value) ? value >>> 0 : INVALID;
}

/** A Duration field (`seconds` int64, `nanos` int32) written as a plain varint: non-negative integers only. */
function durationPart(value: unknown, max: number): number {
  if (absent(value)) return ABSENT;
  return typeof value === 'number' && Number.isInteger(value) && value >= 0 && value <= max ? value : INVALID;
}

/** Bytes of a string field's body, or INVALID unless it is all ASCII. */
function asciiLength(value: unknown): number {
  if (typeof value !== 'string') return INVALID;
  for (let i = 0; i < value.length; i++) if (value.charCodeAt(i) > 0x7f) return INVALID;
  return value.length;
}

/** Size of a string field with its tag (0 when absent), or INVALID. */
function stringFieldSize(value: unknown): number {
  if (absent(value)) return 0;
  const length = asciiLength(value);
  return length < 0 ? INVALID : 1 + varintSize(length) + length;
}

function headerSize(header: RlsHeaderValue): number {
  if (typeof header !== 'object' || header === null) return INVALID;
  const key = stringFieldSize(header.key);
  const value = stringFieldSize(header.value);
  return key < 0 || value < 0 ? INVALID : key + value;
}

function limitSize(limit: RlsDescriptorStatus['current_limit']): number {
  if (typeof limit !== 'object' || limit === null) return INVALID;
  const perUnit = uint32(limit.requests_per_unit);
  const unit = enumValue(UNITS, limit.unit);
  const name = stringFieldSize(limit.name);
  if (perUnit === INVALID || unit === INVALID || name < 0) return INVALID;
  return (
    (perUnit === ABSENT ? 0 : 1 + varintSize(perUnit)) + (unit === ABSENT ? 0 : 1 + varintSize(unit)) + name
  );
}

function durationSize(duration: RlsDescriptorStatus['duration_until_reset']): number {
  if (typeof duration !== 'object' || duration === null) return INVALID;
  const seconds = durationPart(duration.seconds, Number.MAX_SAFE_INTEGER);
  const nanos = durationPart(duration.nanos, 0x7fffffff);
  if (seconds === INVALID || nanos === INVALID) return INVALID;
  return (seconds === ABSENT ? 0 : 1 + varintSize(seconds)) + (nanos === ABSENT ? 0 : 1 + varintSize(nanos));
}

/** A nested message's body size (ABSENT when the field is, INVALID when it cannot be written). */
function messageBodySize<T>(value: T | undefined | null, bodySize: (value: T) => number): number {
  return absent(value) ? ABSENT : bodySize(value);
}

/** A nested message field's size with its tag, from its body's (0 when absent). */
function messageFieldSize(body: number): number {
  return body === ABSENT ? 0 : 1 + varintSize(body) + body;
}

/** A status's body size, or INVALID; pushes its body's, its limit's and its duration's sizes to `sizes`. */
function statusSize(status: RlsDescriptorStatus, sizes: number[]): number {
  if (typeof status !== 'object' || status === null) return INVALID;
  const code = enumValue(CODES, status.code);
  const remaining = uint32(status.limit_remaining);
  const limit = messageBodySize(status.current_limit, limitSize);
  const duration = messageBodySize(status.duration_until_reset, durationSize);
  if (code === INVALID || remaining === INVALID || limit === INVALID || duration === INVALID) return INVALID;
  const body =
    (code === ABSENT ? 0 : 1 + varintSize(code)) +
    messageFieldSize(limit) +
    (remaining === ABSENT ? 0 : 1 + varintSize(remaining)) +
    messageFieldSize(duration);
  sizes.push(body, limit, duration);
  return body;
}

/** One status's fields; `limitBody` and `durationBody` are their sizes from the size pass. */
function writeStatus(
  out: Buffer,
  at: number,
  status: RlsDescriptorStatus,
  limitBody: number,
  durationBody: number,
): number {
  if (!absent(status.code)) {
    out[at++] = 0x08;
    at = writeVarint(out, at, CODES[status.code]);
  }
  const limit = status.current_limit;
  if (!absent(limit)) {
    out[at++] = 0x12;
    at = writeVarint(out, at, limitBody);
    if (!absent(limit.requests_per_unit)) {
      out[at++] = 0x08;
      at = writeVarint(out, at, limit.requests_per_unit >>> 0);
    }
    if (!absent(limit.unit)) {
      out[at++] = 0x10;
      at = writeVarint(out, at, UNITS[limit.unit]);
    }
    at = writeString(out, at, 0x1a, limit.name);
  }
  if (!absent(status.limit_remaining)) {
    out[at++] = 0x18;
    at = writeVarint(out, at, status.limit_remaining >>> 0);
  }
  const duration = status.duration_until_reset;
  if (!absent(duration)) {
    out[at++] = 0x22;
    at = writeVarint(out, at, durationBody);
    if (!absent(duration.seconds)) {
      out[at++] = 0x08;
      at = writeVarint(out, at, duration.seconds);
    }
    if (!absent(duration.nanos)) {
      out[at++] = 0x10;
      at = writeVarint(out, at, duration.nanos);
    }
  }
  return at;
}

/** A string field (tag, length, ASCII bytes); nothing when absent. */
function writeString(out: Buffer, at: number, tag: number, value: string | undefined | null): number {
  if (absent(value)) return at;
  out[at++] = tag;
  at = writeVarint(out, at, value.length);
  for (let i = 0; i < value.length; i++) out[at++] = value.charCodeAt(i);
  return at;
}

/** Bytes of a varint of a non-negative integer up to 2^53 − 1. */
function varintSize(value: number): number {
  let size = 1;
  while (value >= 0x80) {
    value = Math.floor(value / 0x80);
    size++;
  }
  return size;
}

function writeVarint(out: Buffer, at: number, value: number): number {
  while (value >= 0x80) {
    out[at++] = (value % 0x80) | 0x80;
    value = Math.floor(value / 0x80);
  }
  out[at++] = value;
  return at;
}
