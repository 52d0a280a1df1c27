/** One record as read from the ledger; offsets are int64 decimal strings. */
export interface LedgerRecord {
  readonly offset: string;
  readonly key: string | null;
  readonly value: Buffer | null;
  readonly headers: Readonly<Record<string, string>>;
  /** Broker or producer timestamp, milliseconds since the epoch, as a decimal string. */
  readonly timestamp: string;
}

export interface LedgerBatch {
  readonly topic: string;
  readonly partition: number;
  /** Offset the next produced record of this partition will get. */
  readonly highWatermark: string;
  readonly records: readonly LedgerRecord[];
}

/** Controls passed with every batch. */
export interface BatchContext {
  /** Call during long batches, or the group evicts this member and rebalances. */
  heartbeat(): Promise<void>;
  /** False once the consumer stops: finish the current step and return. */
  isRunning(): boolean;
  /** True once a rebalance or seek made the rest of this batch obsolete: stop and return. */
  isStale(): boolean;
  /** Marks records through `offset` as processed, so a partial batch is not fetched again. */
  resolveOffset(offset: string): void;
  /** Commits this partition through `offset` to the group (stores `offset + 1`, Kafka's next-to-read). */
  commitThrough(offset: string): Promise<void>;
}

export type BatchHandler = (batch: LedgerBatch, context: BatchContext) => Promise<void>;

/** Partitions per topic that this member owns after a (re)join. */
export type Assignment = Readonly<Record<string, readonly number[]>>;

export interface ConsumerOptions {
  readonly groupId: string;
  readonly topics: readonly string[];
  /** Where a group with no committed offset starts: earliest (true) or latest (false). */
  readonly fromBeginning: boolean;
  /** Commit resolved offsets automatically; off for consumers that keep offsets with their state. */
  readonly autoCommit?: boolean;
  readonly partitionsConsumedConcurrently?: number;
  readonly sessionTimeoutMs?: number;
  readonly heartbeatIntervalMs?: number;
  /** Longest a fetch waits for data; also bounds how long `stop` waits for the fetch loop. */
  readonly maxWaitTimeMs?: number;
  /**
   * Bytes a fetch waits for (up to `maxWaitTimeMs`) before the broker answers (kafkajs default 1:
   * answer as soon as any record exists).
   */
  readonly minBytes?: number;
  /** Most bytes fetched per partition (kafkajs default 1 MiB). */
  readonly maxBytesPerPartition?: number;
  /** Most bytes of one fetch over all partitions (kafkajs default 10 MiB). */
  readonly maxBytes?: number;
}

/**
 * A consumer-group member that processes whole batches. Offsets are at-least-once: anything not
 * committed (or stored by the caller) is delivered again after a restart or rebalance.
 */
export interface LedgerConsumer {
  readonly groupId: string;
  connect(): Promise<void>;
  /** Subscribes and starts the fetch loop; resolves once running, not when it ends. */
  run(handler: BatchHandler): Promise<void>;
  /** Sets where a partition reads next; valid after `run`, typically from `onAssigned`. */
  seek(topic: string, partition: number, offset: string): void;
  commitOffsets(offsets: readonly { topic: string; partition: number; offset: string }[]): Promise<void>;
  /** Called after every join with the new assignment; returns an unsubscribe function. */
  onAssigned(listener: (assignment: Assignment) => void): () => void;
  /** Called when the fetch loop dies; `restarting` tells whether the client will rejoin by itself. */
  onCrash(listener: (error: Error, restarting: boolean) => void): () => void;
  stop(): Promise<void>;
  disconnect(): Promise<void>;
}

export interface LedgerConsumerFactory {
  create(options: ConsumerOptions): LedgerConsumer;
}
