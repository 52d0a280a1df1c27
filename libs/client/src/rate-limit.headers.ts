import type { TallyQuota, TallyRateLimit, TallyRateLimitBinding } from './client.types';

/** Response headers with lower-case names, as `node:http` hands them over. */
export type ResponseHeaders = Readonly<Record<string, string | readonly string[] | undefined>>;

/** The headers a caller relays to its own clients (DESIGN §3), in the order they are set. */
const RELAYED = [
  'ratelimit-name',
  'ratelimit-limit',
  'ratelimit-remaining',
  'ratelimit-reset',
  'ratelimit-policy',
  'ratelimit',
  'retry-after',
] as const;

/** No headers at all: a batch item, or a result the client made itself. */
export const NO_RATE_LIMIT: TallyRateLimit = { binding: null, quotas: [], retryAfterSeconds: null };

/** The relayable headers as sent: a guard passes them on verbatim, so nothing is re-derived. */
export function pickRateLimitHeaders(headers: ResponseHeaders): Record<string, string> {
  const picked: Record<string, string> = {};
  for (const name of RELAYED) {
    const value = headerValue(headers, name);
    if (value !== undefined) picked[name] = value;
  }
  return picked;
}

/**
 * Parses what `pickRateLimitHeaders` kept. A malformed number makes the binding (or Retry-After)
 * null rather than NaN: these headers are advice, and a caller must never compute with NaN.
 */
export function parseRateLimitHeaders(headers: Readonly<Record<string, string>>): TallyRateLimit {
  const retryAfter = wholeNumber(headers['retry-after']);
  return {
    binding: parseBinding(headers),
    quotas: parseQuotas(headers['ratelimit-policy']),
    retryAfterSeconds: retryAfter,
  };
}

function parseBinding(headers: Readonly<Record<string, string>>): TallyRateLimitBinding | null {
  const policy = headers['ratelimit-name'];
  const limit = wholeNumber(headers['ratelimit-limit']);
  const remaining = wholeNumber(headers['ratelimit-remaining']);
  const resetSeconds = wholeNumber(headers['ratelimit-reset']);
  if (policy === undefined || limit === null || remaining === null || resetSeconds === null) return null;
  // The draft header's id is "<policy>.<window>"; both names may hold dots, the policy is known.
  const [item] = parseItems(headers['ratelimit'] ?? '');
  const window = item?.id.startsWith(`${policy}.`) ? item.id.slice(policy.length + 1) : null;
  return { policy, window, limit, remaining, resetSeconds };
}

function parseQuotas(value: string | undefined): TallyQuota[] {
  if (value === undefined) return [];
  const quotas: TallyQuota[] = [];
  for (const item of parseItems(value)) {
    const limit = wholeNumber(item.params.q);
    if (limit !== null) quotas.push({ id: item.id, limit });
  }
  return quotas;
}

interface Item {
  readonly id: string;
  readonly params: Readonly<Record<string, string>>;
}

/** `"id";k=v;k=v, "id";k=v`: the subset of structured fields (RFC 8941) the draft headers use. */
const ITEM = /"((?:[^"\\]|\\.)*)"((?:\s*;\s*[a-z*][a-z0-9_.*-]*=[^,;]*)*)/g;
const PARAM = /;\s*([a-z*][a-z0-9_.*-]*)=([^,;]*)/g;

function parseItems(value: string): Item[] {
  const items: Item[] = [];
  for (const match of value.matchAll(ITEM)) {
    const params: Record<string, string> = {};
    for (const p of match[2].matchAll(PARAM)) params[p[1]] = p[2].trim();
    items.push({ id: match[1].replace(/\\(.)/g, '$1'), params });
  }
  return items;
}

function headerValue(headers: ResponseHeaders, name: string): string | undefined {
  const value = headers[name];
  if (value === undefined) return undefined;
  return typeof value === 'string' ? value : value.join(', ');
}

function wholeNumber(value: string | undefined): number | null {
  if (value === undefined || !/^\s*\d+\s*$/.test(value)) return null;
  return Number(value);
}
