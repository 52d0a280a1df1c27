import type { SendOptions } from '@tally/ledger';
import type { RandomSource, RedisConnection } from '@tally/redis';

/** Settings of the relay; the app builds them from TallyConfig, tests directly. */
export interface RelayOptions {
  /** Where Redis is (the decision engine's Redis: the outbox streams live beside the counters). */
  readonly redis: RedisConnection;
  /** TALLY_SHARDS: one outbox stream and one denial hash per shard. */
  readonly shards: number;
  /** TALLY_TOPIC_PARTITIONS / TALLY_TOPIC_REPLICATION: topics ensured at start. */
  readonly topicPartitions: number;
  readonly topicReplication: number | 'auto';
  /** This relay's consumer name in the group; default `host-pid-random`. */
  readonly consumerName?: string;
  /**
   * Entries per batch at most (one read, one sendBatch unless `maxBatchBytes` splits it, one ack
   * round trip), spread over the streams read. A full batch goes at once, without lingering. Default 1000.
   */
  readonly batchSize?: number;
  /** Bytes per Kafka request, below the broker's 1 MiB `message.max.bytes`. Default 512 KiB. */
  readonly maxBatchBytes?: number;
  /**
   * How long a batch collects entries after its first one before it is read and produced (Kafka's
   * `linger.ms`): fewer, larger produce requests for at most this much extra latency. 0 = produce
   * whatever one read returns. Default 50 ms (docs/benchmarks.md, "Relay at a steady rate").
   */
  readonly lingerMs?: number;
  /** Record batch compression: `gzip` (built into kafkajs) or `none`. Default `none` (measured cheaper). */
  readonly compression?: NonNullable<SendOptions['compression']>;
  /** Longest an idle XREADGROUP waits for new entries (single node). Default 1000 ms. */
  readonly blockMs?: number;
  /** Longest pause between polls when every stream is idle (Redis Cluster). Default 200 ms. */
  readonly pollMaxMs?: number;
  /** An entry pending this long in another consumer is presumed orphaned and re-claimed. Default 30 s. */
  readonly claimMinIdleMs?: number;
  /**
   * How often pending entries are looked for: one XPENDING summary per stream, and XAUTOCLAIM only on
   * the streams whose oldest pending entry is older than `claimMinIdleMs`. Default 5 s.
   */
  readonly claimIntervalMs?: number;
  /** How often the denial hashes are looked at (one EXISTS) and, when some exist, drained. Default 1 s. */
  readonly denialIntervalMs?: number;
  /** Lifetime of a per-shard denial lease; a dead owner's shards move on after this. Default 10 s. */
  readonly denialLeaseMs?: number;
  /**
   * Retry backoff against a failing Redis or Kafka: a wait drawn uniformly below a ceiling that
   * doubles from `retryBaseMs` up to `retryMaxMs` (full jitter). Defaults 100 ms and 5 s.
   */
  readonly retryBaseMs?: number;
  readonly retryMaxMs?: number;
  /** The jitter's random source. Default `Math.random`; tests inject their own. */
  readonly random?: RandomSource;
  /**
   * On shutdown, how long the in-flight batch may still try to reach Kafka. Past it the batch stays
   * pending and another relay re-claims it. Default 10 s (below the apps' 15 s grace).
   */
  readonly shutdownGraceMs?: number;
}

export type ResolvedRelayOptions = Required<RelayOptions>;

export function resolveRelayOptions(options: RelayOptions, defaultName: () => string): ResolvedRelayOptions {
  return {
    consumerName: defaultName(),
    batchSize: 1000,
    maxBatchBytes: 512 * 1024,
    lingerMs: 50,
    compression: 'none',
    blockMs: 1000,
    pollMaxMs: 200,
    claimMinIdleMs: 30_000,
    claimIntervalMs: 5_000,
    denialIntervalMs: 1_000,
    denialLeaseMs: 10_000,
    retryBaseMs: 100,
    retryMaxMs: 5_000,
    random: Math.random,
    shutdownGraceMs: 10_000,
    ...stripUndefined(options),
  };
}

function stripUndefined<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}
