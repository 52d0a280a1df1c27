/**
 * Generators of hostile decision requests for the hostile-input suite. Every case they make is
 * INVALID in at least one way by construction (an unknown field, a bad selector value, a cost out of
 * range, a key outside its alphabet, a wrong token or media type, a route that does not exist), so the
 * only right answer to each is a 4xx that consumes nothing. Values embed `RAW_TOKEN` wherever a
 * caller could put it, so a leak of any of them into keys, logs, metrics or answers is visible.
 */
import fc from 'fast-check';

/** A raw `token` selector value: it must never appear outside the request that carried it. */
export const RAW_TOKEN = 'raw-token-5c1d9e2b7a40f3';
export const TENANT = 'hostile-acme';
/** `max_cost` of the suite's enforce policy: a cost above it is 413. */
export const MAX_COST = 50;

export interface HostileCase {
  readonly method: string;
  readonly path: string;
  /** The JSON text as sent (may be malformed on purpose); undefined sends no body. */
  readonly body?: string;
  /** Authorization header; undefined = the caller token, null = none. */
  readonly authorization?: string | null;
  readonly contentType?: string;
  readonly extraHeaders?: Readonly<Record<string, string>>;
}

/**
 * The fields a request may have: any other name is an unknown field, refused — the names of
 * Object.prototype (`toString`, `constructor`, …) included, which the old DTO let vanish.
 */
const FIELDS = ['selectors', 'attributes', 'cost', 'idempotency_key'];
const DIMS = ['tenant', 'principal', 'token', 'client', 'route'];

/** A valid request: the suite mutates one part of it at a time. */
export function validRequest(): Record<string, unknown> {
  return { selectors: { tenant: TENANT, principal: 'svc-1', route: 'tokened', token: RAW_TOKEN }, cost: 1 };
}

const decide = (body: string): HostileCase => ({ method: 'POST', path: '/v1/decisions', body });
const withField = (field: string, value: unknown): Record<string, unknown> => ({
  ...validRequest(),
  [field]: value,
});
const json = (value: unknown): string => JSON.stringify(value);

/** A character no selector value may hold: C0, DEL, C1 (Unicode's control category). */
const controlChar = fc
  .oneof(fc.integer({ min: 0, max: 0x1f }), fc.integer({ min: 0x7f, max: 0x9f }))
  .map((c) => String.fromCharCode(c));
const loneSurrogate = fc.integer({ min: 0xd800, max: 0xdfff }).map((c) => String.fromCharCode(c));
const nonString = fc.oneof(
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant(null),
  fc.array(fc.string(), { maxLength: 3 }),
  fc.dictionary(fc.string(), fc.string(), { maxKeys: 3 }),
);

/** A selector or attribute value that normalization must refuse (wrapped so trimming cannot save it). */
const badValue = fc.oneof(
  fc.tuple(fc.string(), controlChar, fc.string()).map(([a, c, b]) => `${RAW_TOKEN}${a}${c}${b}x`),
  loneSurrogate.map((s) => `${RAW_TOKEN}${s}x`),
  fc.constantFrom('', ' ', '\t', ' \n  '),
  fc.string({ minLength: 257, maxLength: 600 }).map((s) => `x${s}x`),
  fc.integer({ min: 129, max: 300 }).map((n) => `${RAW_TOKEN}${'é'.repeat(n)}`),
  nonString,
);

/** Whole bodies that are not a decision request. */
export const hostileBodies: fc.Arbitrary<HostileCase> = fc.oneof(
  fc
    .jsonValue()
    .filter((v) => v === null || typeof v !== 'object' || Array.isArray(v))
    .map((v) => decide(json(v))),
  fc
    .tuple(
      fc.oneof(
        fc.string({ minLength: 1 }).filter((k) => !FIELDS.includes(k)),
        // Names a random string almost never hits, and an object's own prototype chain already has.
        fc.constantFrom(...Object.getOwnPropertyNames(Object.prototype)),
      ),
      fc.jsonValue(),
    )
    .map(([k, v]) => decide(json({ ...validRequest(), [k]: v }))),
  // A proper prefix of a JSON object is never JSON.
  fc.tuple(fc.jsonValue(), fc.nat()).map(([v, n]) => {
    const text = json({ ...validRequest(), attributes: { note: json(v) } });
    return decide(text.slice(0, n % text.length) || '{');
  }),
  // Caller-controlled depth: far past any sane limit, as objects and as arrays.
  fc
    .integer({ min: 100, max: 20_000 })
    .map((d) =>
      decide(`{"selectors":{"tenant":"${TENANT}"},"attributes":${'{"a":'.repeat(d)}"v"${'}'.repeat(d)}}`),
    ),
  fc.integer({ min: 100, max: 20_000 }).map((d) => decide(`{"cost":${'['.repeat(d)}${']'.repeat(d)}}`)),
);

/** Requests whose selectors or attributes cannot identify a caller. */
export const hostileSelectors: fc.Arbitrary<HostileCase> = fc.oneof(
  nonString
    .filter((v) => typeof v !== 'object' || v === null || Array.isArray(v))
    .map((v) => decide(json(withField('selectors', v)))),
  fc.tuple(fc.constantFrom(...DIMS), badValue).map(([dim, v]) => {
    const body = validRequest();
    return decide(json({ ...body, selectors: { ...(body.selectors as object), [dim]: v } }));
  }),
  fc
    .tuple(
      fc.string({ minLength: 1 }).filter((k) => !DIMS.includes(k)),
      fc.string(),
    )
    .map(([k, v]) => decide(json(withField('selectors', { tenant: TENANT, principal: 'svc-1', [k]: v })))),
  // A key dim of the enforce policy left out: selector_identity_missing.
  fc.constantFrom('tenant', 'principal').map((dim) => {
    const selectors: Record<string, string> = { tenant: TENANT, principal: 'svc-1', token: RAW_TOKEN };
    delete selectors[dim];
    return decide(json({ selectors }));
  }),
  fc
    .tuple(
      fc.stringMatching(/^[a-z][a-z0-9_]{0,20}$/).filter((k) => !DIMS.includes(k)),
      badValue,
    )
    .map(([k, v]) => decide(json(withField('attributes', { [k]: v })))),
  nonString.map((v) =>
    decide(
      json(
        withField(
          'attributes',
          typeof v === 'object' && v !== null && !Array.isArray(v) ? { 'BAD NAME': v } : v,
        ),
      ),
    ),
  ),
);

/** Costs that are not a whole number in range. */
export const hostileCosts: fc.Arbitrary<HostileCase> = fc.oneof(
  fc.integer({ min: Number.MIN_SAFE_INTEGER, max: -1 }).map((c) => decide(json(withField('cost', c)))),
  fc
    .double({ noNaN: true, noDefaultInfinity: true })
    .filter((d) => !Number.isInteger(d))
    .map((c) => decide(json(withField('cost', c)))),
  fc
    .integer({ min: MAX_COST + 1, max: Number.MAX_SAFE_INTEGER })
    .map((c) => decide(json(withField('cost', c)))),
  fc
    .constantFrom('1e400', '-1e400', '9007199254740993', '1e21', '123456789012345678901234567890', '1.5e3')
    .map((raw) => decide(json(withField('cost', 0)).replace('"cost":0', `"cost":${raw}`))),
  nonString.filter((v) => typeof v !== 'number').map((c) => decide(json(withField('cost', c)))),
  fc.string().map((c) => decide(json(withField('cost', c)))),
);

/** Idempotency keys outside printable ASCII, empty, too long, or not strings. */
export const hostileIdempotencyKeys: fc.Arbitrary<HostileCase> = fc.oneof(
  fc
    .tuple(
      fc.string({ maxLength: 20 }),
      fc.oneof(
        controlChar,
        fc.constant(' '),
        loneSurrogate,
        fc.string({ unit: 'grapheme', minLength: 1, maxLength: 1 }).filter((g) => /[^\x21-\x7e]/.test(g)),
      ),
    )
    .map(([a, c]) => decide(json(withField('idempotency_key', `${RAW_TOKEN}${a}${c}k`)))),
  fc.constant(decide(json(withField('idempotency_key', '')))),
  fc
    .string({ minLength: 300, maxLength: 2000 })
    .map((k) => decide(json(withField('idempotency_key', `k${k}`)))),
  nonString.filter((v) => v !== null).map((k) => decide(json(withField('idempotency_key', k)))),
);

const validBody = json(validRequest());
const printableToken = fc.stringMatching(/^[!-~]{1,80}$/);

/** A valid body under a wrong token or media type, with junk headers beside. */
export const hostileHeaders: fc.Arbitrary<HostileCase> = fc
  .tuple(
    fc.oneof(
      fc.record({
        authorization: fc.oneof(
          fc.constant(null),
          printableToken.map((t) => `Basic ${t}`),
          printableToken.map((t) => `Bearer ${t}`),
          fc.constant(`Bearer ${RAW_TOKEN}`),
          fc.constantFrom('Bearer', 'Bearer ', 'bearer\t', 'Token x'),
        ),
      }),
      fc.record({
        contentType: fc.oneof(
          fc.constantFrom(
            'text/plain',
            'application/x-www-form-urlencoded',
            'multipart/form-data; boundary=x',
            'application/xml',
            'text/json',
            'application/jsonx',
          ),
          fc
            .tuple(fc.stringMatching(/^[a-z]{1,12}$/), fc.stringMatching(/^[a-z0-9.+-]{1,20}$/))
            .map(([t, s]) => `${t}/${s}`)
            .filter((t) => !t.startsWith('application/json')),
        ),
      }),
    ),
    fc.dictionary(fc.stringMatching(/^x-[a-z0-9-]{1,30}$/), printableToken, { maxKeys: 4 }),
  )
  .map(([h, extraHeaders]) => ({
    method: 'POST',
    path: '/v1/decisions',
    body: validBody,
    ...h,
    extraHeaders,
  }));

/** Methods a route does not have, and routes that do not exist (with the raw token in their query). */
export const hostileRoutes: fc.Arbitrary<HostileCase> = fc.oneof(
  fc
    .tuple(
      fc.constantFrom('GET', 'PUT', 'DELETE', 'PATCH'),
      fc.constantFrom('/v1/decisions', '/v1/decisions:batch'),
    )
    .map(([method, path]) => ({ method, path, body: method === 'GET' ? undefined : validBody })),
  fc
    .tuple(
      fc.constantFrom('GET', 'POST', 'DELETE'),
      fc.array(fc.webSegment(), { minLength: 1, maxLength: 4 }),
      fc.string({ maxLength: 30 }),
    )
    .map(([method, segments, q]) => ({
      method,
      path: `/zz-${segments.join('/')}?token=${RAW_TOKEN}&q=${encodeURIComponent(q)}`,
      body: method === 'POST' ? validBody : undefined,
    })),
);

const anyBadItem = fc
  .oneof(hostileSelectors, hostileCosts, hostileIdempotencyKeys)
  .map((c) => JSON.parse(c.body ?? 'null') as unknown);

/** Batch calls with a bad envelope, or only bad items. */
export const hostileBatches: fc.Arbitrary<HostileCase> = fc
  .oneof(
    nonString.map((v) => json({ requests: v })),
    fc.constant(json({ requests: [] })),
    fc.constant(json({ requests: Array.from({ length: 1001 }, () => ({ selectors: { tenant: TENANT } })) })),
    fc
      .tuple(
        fc.oneof(
          fc.string({ minLength: 1 }).filter((k) => k !== 'requests'),
          fc.constantFrom(...Object.getOwnPropertyNames(Object.prototype)),
        ),
        fc.jsonValue(),
      )
      .map(([k, v]) => json({ requests: [validRequest()], [k]: v })),
    fc.array(anyBadItem, { minLength: 1, maxLength: 6 }).map((requests) => json({ requests })),
  )
  .map((body) => ({ method: 'POST', path: '/v1/decisions:batch', body }));
