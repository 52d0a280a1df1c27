/** Settings of the `DegradedLedger`. */
export interface DegradedLedgerOptions {
  /** Degraded decisions kept while Redis is away; beyond it new ones are dropped (counted, logged). */
  readonly capacity: number;
  /** How often to try Redis while entries wait, when no decision succeeded to trigger a flush. */
  readonly probeIntervalMs: number;
  /** Entries per Redis round trip: small enough not to stall decisions sharing the connection. */
  readonly batchSize: number;
  /** Deadline of one append round trip (a batch is larger than one decision's step). */
  readonly flushTimeoutMs: number;
  /**
   * Lifetime of a degraded decision's append marker in Redis: a retried append within it is
   * recognised and writes nothing (degraded-append.lua). A retry only follows an append whose reply
   * was lost, at the next flush that reaches its shard.
   */
  readonly markerTtlMs: number;
  /** Deadline of the last flush at shutdown: a stop must not wait on a dead Redis. */
  readonly shutdownTimeoutMs: number;
  /** At most one "dropped" warning per this period, however many are dropped. */
  readonly dropLogIntervalMs: number;
}

export const DEFAULT_DEGRADED_LEDGER: DegradedLedgerOptions = {
  // ≈ 0.5–1 KB per entry: at most ≈ 50–100 MB of heap during a long outage under heavy traffic.
  capacity: 100_000,
  probeIntervalMs: 1_000,
  batchSize: 500,
  flushTimeoutMs: 1_000,
  // A retry comes within seconds of the reply it lost, unless the shard's node then stays away: an
  // hour covers any failover and restart; ≈ 100 B of Redis memory per degraded decision meanwhile.
  markerTtlMs: 3_600_000,
  shutdownTimeoutMs: 2_000,
  dropLogIntervalMs: 10_000,
};
