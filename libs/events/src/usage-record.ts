import { propertiesOf } from './outbox/schema-json';
import { OutboxPayloadV1, OutboxPolicyV1, OutboxWindowV1 } from './outbox/outbox-payload.v1';
import { decodeOutboxResults, decodeOutboxTime, type OutboxWindowResult } from './outbox/outbox-payload';
import { PAYLOAD_PREFIX } from './outbox/payload-prefix';
import { TRACEPARENT } from './cloud-event.v1';
import {
  CLOUDEVENTS_SPECVERSION,
  EVENT_DATA_CONTENT_TYPE,
  EVENT_SOURCE,
  USAGE_EVENT_TYPE,
} from './event-types';
import { UsageDataV1 } from './usage-event.v1';

/**
 * The relay's fast path for the one common entry, an allowed decision: its `tally.usage.v1` record
 * written straight from the payload's text. `payloadJson` writes `p` in a fixed order with
 * `JSON.stringify`'s escapes, and the usage event repeats most of it in the same order, so the text
 * is checked against that exact grammar in one pass and spliced: no `JSON.parse` of `p`, no event
 * objects, no `JSON.stringify` of the event. Anything else — another outcome, other spacing, escapes
 * or key order than `JSON.stringify` writes, duplicate or index-like keys, a non-string selector, a
 * cost that is not a positive integer, results that do not match the windows, an unknown time —
 * answers undefined and the reference builder (`ledgerEventFromOutbox`) decides, dead-lettering
 * what is invalid. So the bytes are those of the reference builder whenever this answers
 * (usage-record.spec.ts compares both on generated and mutated entries).
 */
export interface UsageRecord {
  /** The Kafka key (`kafkaKeyOf` of the event). */
  readonly key: string;
  /** The event as JSON: byte for byte `JSON.stringify(ledgerEventFromOutbox(entry))`. */
  readonly value: string;
}

/** The grammar below hard-codes both schemas' orders: a schema that moves fails here, at load. */
function assertOrder(what: string, actual: readonly string[], expected: readonly string[]): void {
  if (actual.join() !== expected.join())
    throw new Error(`usage-record.ts follows ${what} = ${expected.join()}; the schema says ${actual.join()}`);
}
const names = (schema: Parameters<typeof propertiesOf>[0]) => propertiesOf(schema).map((p) => p.name);
assertOrder('the outbox payload', names(OutboxPayloadV1), [
  'v', 'outcome', 'reason', 'degraded_cause', 'id', 'policy_set_version', 'tenant', 'selectors',
  'attributes', 'cost', 'idempotency_key', 'policies', 'traceparent',
]); // prettier-ignore
assertOrder('a payload policy', names(OutboxPolicyV1), ['name', 'mode', 'key', 'windows']);
assertOrder('a payload window', names(OutboxWindowV1), ['name', 'role', 'limit']);
assertOrder('usage data', Object.keys(UsageDataV1.properties), [
  'policy_set_version', 'tenant', 'selectors', 'attributes', 'cost', 'outcome', 'degraded_cause',
  'idempotency_key', 'policies',
]); // prettier-ignore

const HEAD = `${PAYLOAD_PREFIX}"id":`;
const EVENT_HEAD = `{"specversion":${JSON.stringify(CLOUDEVENTS_SPECVERSION)},"id":`;
const SOURCE_TIME = `,"source":${JSON.stringify(EVENT_SOURCE)},"time":"`;
const CONTENT_TYPE = `,"datacontenttype":${JSON.stringify(EVENT_DATA_CONTENT_TYPE)}`;
const TYPE_DATA = `,"type":${JSON.stringify(USAGE_EVENT_TYPE)},"data":{`;

/** Spans of the parts of one payload the record repeats, reused from entry to entry. */
const policyHeads: number[] = []; // per policy: start, end of `{"name":…,"mode":…,"key":"…"`, window count
const windowHeads: number[] = []; // per window: start, end of `{"name":…,"role":…,"limit":N`
const keyStarts: number[] = [];
const keyEnds: number[] = [];

/** The usage record of an allowed entry, or undefined when the reference builder must decide. */
export function usageRecordFromOutbox(p: string, t: string, r: string): UsageRecord | undefined {
  if (!p.startsWith(HEAD)) return undefined;
  let i = HEAD.length;
  const idStart = i;
  const idEnd = (i = stringEnd(p, i));
  if (i < 0 || idEnd - idStart === 2) return undefined; // a missing id is the reference's error
  const dataStart = i + 1;
  if ((i = literal(p, i, ',"policy_set_version":')) < 0 || (i = stringEnd(p, i)) < 0) return undefined;
  let tenant = -1;
  let tenantEnd = -1;
  if (p.startsWith(',"tenant":', i)) {
    tenant = i + 10;
    if ((i = tenantEnd = stringEnd(p, tenant)) < 0) return undefined;
  }
  if ((i = literal(p, i, ',"selectors":')) < 0 || (i = flatObjectEnd(p, i)) < 0) return undefined;
  if ((i = literal(p, i, ',"attributes":')) < 0 || (i = flatObjectEnd(p, i)) < 0) return undefined;
  if ((i = literal(p, i, ',"cost":')) < 0 || (i = positiveIntEnd(p, i)) < 0) return undefined;
  const dataEnd = i;
  let idem = -1;
  if (p.startsWith(',"idempotency_key":', i)) {
    idem = i;
    if ((i = stringEnd(p, i + 19)) < 0) return undefined;
  }
  const idemEnd = i;
  if ((i = literal(p, i, ',"policies":[')) < 0) return undefined;
  policyHeads.length = 0;
  windowHeads.length = 0;
  while (p.charCodeAt(i) !== 0x5d /* ] */) {
    if (policyHeads.length > 0 && (i = literal(p, i, ',')) < 0) return undefined;
    const start = i;
    if ((i = literal(p, i, '{"name":')) < 0 || (i = stringEnd(p, i)) < 0) return undefined;
    if ((i = literal(p, i, ',"mode":')) < 0 || (i = stringEnd(p, i)) < 0) return undefined;
    if ((i = literal(p, i, ',"key":')) < 0 || (i = stringEnd(p, i)) < 0) return undefined;
    policyHeads.push(start, i, 0);
    if ((i = literal(p, i, ',"windows":[')) < 0) return undefined;
    let windows = 0;
    while (p.charCodeAt(i) !== 0x5d) {
      if (windows > 0 && (i = literal(p, i, ',')) < 0) return undefined;
      const window = i;
      if ((i = literal(p, i, '{"name":')) < 0 || (i = stringEnd(p, i)) < 0) return undefined;
      if ((i = literal(p, i, ',"role":')) < 0 || (i = stringEnd(p, i)) < 0) return undefined;
      if ((i = literal(p, i, ',"limit":')) < 0 || (i = intEnd(p, i)) < 0) return undefined;
      windowHeads.push(window, i);
      windows++;
      if ((i = literal(p, i, '}')) < 0) return undefined;
    }
    policyHeads[policyHeads.length - 1] = windows;
    if ((i = literal(p, i, ']}')) < 0) return undefined;
  }
  i++;
  let trace = '';
  if (p.startsWith(',"traceparent":', i)) {
    const start = i + 15;
    if ((i = stringEnd(p, start)) < 0) return undefined;
    // The reference leaves out a traceparent its pattern refuses (no escapes can match it).
    if (TRACEPARENT.test(p.slice(start + 1, i - 1))) trace = `,"traceparent":${p.slice(start, i)}`;
  }
  if (i !== p.length - 1 || p.charCodeAt(i) !== 0x7d /* } */) return undefined;

  let results: readonly OutboxWindowResult[];
  let time: string;
  try {
    results = r === '' ? [] : decodeOutboxResults(r);
    time = new Date(decodeOutboxTime(t)).toISOString();
  } catch {
    return undefined; // the reference throws the same error, or dead-letters the entry
  }
  const windowCount = windowHeads.length / 2;
  if (results.length > 0 && results.length !== windowCount) return undefined;

  let subject = '';
  let key: string;
  if (policyHeads.length > 0) {
    // `<policy>/<key>`: two canonical string bodies around a '/' are the canonical JSON of the whole.
    const head = p.slice(policyHeads[0], policyHeads[1]);
    const name = head.slice(8, head.indexOf(',"mode":'));
    const policyKey = head.slice(head.indexOf(',"key":') + 7);
    subject = `${name.slice(0, -1)}/${policyKey.slice(1)}`;
    key = decoded(subject);
    key = key.slice(key.indexOf('/') + 1);
  } else key = decoded(p.slice(idStart, idEnd));
  if (tenant >= 0) key = decoded(p.slice(tenant, tenantEnd));

  let policies = '';
  let next = 0;
  for (let j = 0; j < policyHeads.length; j += 3) {
    const version = results[next]?.override;
    policies += `${j === 0 ? '' : ','}${p.slice(policyHeads[j], policyHeads[j + 1])}`;
    if (typeof version === 'number') policies += `,"override_version":${num(version)}`;
    policies += ',"windows":[';
    for (let w = 0; w < policyHeads[j + 2]; w++, next++) {
      policies += `${w === 0 ? '' : ','}${p.slice(windowHeads[2 * next], windowHeads[2 * next + 1])}`;
      const result = results[next];
      if (result !== undefined) {
        policies += `,"remaining":${num(result.remaining)},"reset_ms":${num(result.reset_ms)},"would_deny":${result.would_deny === true}`;
        if (typeof result.limit === 'number') policies += `,"override_limit":${num(result.limit)}`;
      }
      policies += '}';
    }
    policies += ']}';
  }
  const value =
    EVENT_HEAD +
    p.slice(idStart, idEnd) +
    SOURCE_TIME +
    time +
    (subject === '' ? '"' : `","subject":${subject}`) +
    CONTENT_TYPE +
    trace +
    TYPE_DATA +
    p.slice(dataStart, dataEnd) +
    ',"outcome":"allowed"' +
    (idem < 0 ? '' : p.slice(idem, idemEnd)) +
    `,"policies":[${policies}]}}`;
  return { key, value };
}

function literal(s: string, i: number, text: string): number {
  return s.startsWith(text, i) ? i + text.length : -1;
}

/** A JSON string's text decoded (most have no escape and are their own body). */
function decoded(json: string): string {
  return json.includes('\\') ? (JSON.parse(json) as string) : json.slice(1, -1);
}

/** `JSON.stringify` of a number read from JSON (1e400 parses to Infinity, which it writes as null). */
function num(n: number): string {
  return Number.isFinite(n) ? String(n) : 'null';
}

/**
 * The index just past the JSON string opening at `i`, or -1 unless it is written exactly as
 * `JSON.stringify` writes its value: only `\"`, `\\`, `\b`, `\f`, `\n`, `\r`, `\t` and lower-case
 * `\u00xx` for the other control characters as escapes, no raw control character, no lone surrogate.
 */
function stringEnd(s: string, i: number): number {
  if (s.charCodeAt(i) !== 0x22) return -1;
  for (i++; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c === 0x22) return i + 1;
    if (c === 0x5c) {
      const e = s.charCodeAt(++i);
      if (e === 0x75 /* u */) {
        if (!s.startsWith('00', i + 1) || !isControlEscape(s.charCodeAt(i + 3), s.charCodeAt(i + 4)))
          return -1;
        i += 4;
      } else if (!SHORT_ESCAPES.has(e)) return -1;
    } else if (c < 0x20) return -1;
    else if (c >= 0xd800 && c <= 0xdfff) {
      const low = s.charCodeAt(i + 1);
      if (c > 0xdbff || !(low >= 0xdc00 && low <= 0xdfff)) return -1;
      i++;
    }
  }
  return -1;
}

/** `"`, `\`, b, f, n, r, t */
const SHORT_ESCAPES = new Set([0x22, 0x5c, 0x62, 0x66, 0x6e, 0x72, 0x74]);
const HEX = '0123456789abcdef';

/** `\u00` + these two hex digits is how JSON.stringify writes a control character without a short form. */
function isControlEscape(a: number, b: number): boolean {
  const high = HEX.indexOf(String.fromCharCode(a));
  const low = HEX.indexOf(String.fromCharCode(b));
  if (high < 0 || high > 1 || low < 0) return false;
  const code = high * 16 + low;
  return code !== 0x08 && code !== 0x09 && code !== 0x0a && code !== 0x0c && code !== 0x0d;
}

/** A non-negative integer of at most 15 digits, no leading zero: read and written back unchanged. */
function intEnd(s: string, i: number): number {
  const start = i;
  while (i - start < 16) {
    const c = s.charCodeAt(i);
    if (c < 0x30 || c > 0x39) break;
    i++;
  }
  const digits = i - start;
  if (digits === 0 || digits > 15 || (digits > 1 && s.charCodeAt(start) === 0x30)) return -1;
  return i;
}

function positiveIntEnd(s: string, i: number): number {
  return s.charCodeAt(i) === 0x30 ? -1 : intEnd(s, i);
}

/**
 * A flat object of string values (selectors, attributes), as JSON.stringify writes a parsed one:
 * keys in the text's order, so none may look like an array index (JSON.parse would move it first)
 * or be repeated (the last would win) or be `__proto__`.
 */
function flatObjectEnd(s: string, i: number): number {
  if (s.charCodeAt(i) !== 0x7b) return -1;
  i++;
  if (s.charCodeAt(i) === 0x7d) return i + 1;
  keyStarts.length = 0;
  keyEnds.length = 0;
  for (;;) {
    const start = i;
    if ((i = stringEnd(s, i)) < 0) return -1;
    const first = s.charCodeAt(start + 1);
    if ((first >= 0x30 && first <= 0x39) || s.startsWith('"__proto__"', start)) return -1;
    for (let k = 0; k < keyStarts.length; k++) {
      if (keyEnds[k] - keyStarts[k] === i - start && s.startsWith(s.slice(start, i), keyStarts[k])) return -1;
    }
    keyStarts.push(start);
    keyEnds.push(i);
    if ((i = literal(s, i, ':')) < 0 || (i = stringEnd(s, i)) < 0) return -1;
    const c = s.charCodeAt(i);
    if (c === 0x7d) return i + 1;
    if (c !== 0x2c) return -1;
    i++;
  }
}
