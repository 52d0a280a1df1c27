/**
 * The request sequences of envoyproxy/ratelimit's own integration tests (`testBasicBaseConfig` and
 * `testShareThreshold` in test/integration/integration_test.go, commit f2fb157), ported as data:
 * each step is one `ShouldRateLimit` call and what the peer's test asserts about its answer. The
 * configs they run against are test/fixtures/envoy/peer/{basic,another,share_threshold}.yaml,
 * unmodified. `$r` in a value is a per-run random number (the peer's `r.Int()`), `$n` a fresh one per
 * step (its `uniqueValue`), so reruns against one Redis meet fresh counters as the peer's test does.
 */

/** `RateLimitResponse.DescriptorStatus` as the peer's test compares it (no limit name: it sets none). */
export interface PeerStatus {
  readonly code: 'OK' | 'OVER_LIMIT';
  /** `[requests_per_unit, unit]`, or null when no rule applies. */
  readonly limit: readonly [number, string] | null;
  readonly remaining: number;
}

export interface PeerStep {
  /** Where in the peer's test this step is. */
  readonly label: string;
  readonly domain: string;
  /** One entry list per descriptor: `[key, value]` pairs. */
  readonly descriptors: readonly (readonly [string, string])[][];
  /** The exact answer; absent when the peer's test accepts any of `anyOf`. */
  readonly expect?: { readonly overall: 'OK' | 'OVER_LIMIT'; readonly statuses: readonly PeerStatus[] };
  readonly anyOf?: readonly ('OK' | 'OVER_LIMIT')[];
  /** Wait this long before the call (the peer's `time.Sleep`, to see `duration_until_reset` fall). */
  readonly sleepMsBefore?: number;
  /** This step's `duration_until_reset` must be below the one of the step with this label. */
  readonly resetBelow?: string;
}

const ok = (rpu: number, unit: string, remaining: number): PeerStatus => ({
  code: 'OK',
  limit: [rpu, unit],
  remaining,
});
const over = (rpu: number, unit: string): PeerStatus => ({
  code: 'OVER_LIMIT',
  limit: [rpu, unit],
  remaining: 0,
});
const overall = (statuses: PeerStatus[]) => ({
  overall: statuses.some((s) => s.code === 'OVER_LIMIT') ? ('OVER_LIMIT' as const) : ('OK' as const),
  statuses,
});

/** `testBasicBaseConfig` without the local cache (`getCacheKey` is then the key itself): 44 calls. */
export const BASIC_BASE_CONFIG: readonly PeerStep[] = [
  {
    label: 'unknown domain',
    domain: 'foo',
    descriptors: [[['hello', 'world']]],
    expect: overall([{ code: 'OK', limit: null, remaining: 0 }]),
  },
  {
    label: 'key1 50/SECOND',
    domain: 'basic',
    descriptors: [[['key1', 'foo']]],
    expect: overall([ok(50, 'SECOND', 49)]),
  },
  ...Array.from({ length: 25 }, (_, i): PeerStep => ({
    label: `key2 random #${i + 1}`,
    domain: 'another',
    descriptors: [[['key2', '$r']]],
    expect: overall([i >= 20 ? over(20, 'MINUTE') : ok(20, 'MINUTE', 20 - (i + 1))]),
  })),
  ...Array.from({ length: 15 }, (_, i): PeerStep => ({
    label: `key2 + key3 #${i + 1}`,
    domain: 'another',
    descriptors: [[['key2', '$r2']], [['key3', '$r2']]],
    // each descriptor stands alone: key2 is charged while key3 is over its limit
    expect: overall([
      ok(20, 'MINUTE', 20 - (i + 1)),
      i >= 10 ? over(10, 'HOUR') : ok(10, 'HOUR', 10 - (i + 1)),
    ]),
  })),
  {
    label: 'key4 first',
    domain: 'another',
    descriptors: [[['key4', 'durTest-$r']]],
    anyOf: ['OK'],
  },
  {
    label: 'key4 two seconds later',
    domain: 'another',
    descriptors: [[['key4', 'durTest-$r']]],
    anyOf: ['OK'],
    sleepMsBefore: 2_000,
    resetBelow: 'key4 first',
  },
];

/** `testShareThreshold`: 21 calls. */
export const SHARE_THRESHOLD: readonly PeerStep[] = [
  ...Array.from({ length: 10 }, (_, i): PeerStep => ({
    label: `files/a.pdf #${i + 1}`,
    domain: 'share-threshold-test',
    descriptors: [[['files', 'files/a.pdf']]],
    anyOf: ['OK', 'OVER_LIMIT'],
  })),
  {
    label: 'files/b.csv shares the threshold',
    domain: 'share-threshold-test',
    descriptors: [[['files', 'files/b.csv']]],
    expect: overall([over(10, 'HOUR')]),
  },
  ...Array.from({ length: 10 }, (_, i): PeerStep => ({
    label: `files_no_share unique #${i + 1}`,
    domain: 'share-threshold-test',
    descriptors: [[['files_no_share', 'files_no_share/$r-$n']]],
    expect: overall([ok(10, 'HOUR', 9)]),
  })),
];
