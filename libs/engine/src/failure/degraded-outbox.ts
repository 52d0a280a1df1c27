import type { DegradedEntry } from './degraded-entry';
import type { DegradedLedgerOptions } from './degraded-ledger.options';

/**
 * The port the degraded ledger flushes through (`DEGRADED_OUTBOX`), provided by the Redis store
 * (`EngineService`): it owns the connection, the node breakers and the order of shutdown.
 */
export interface DegradedOutbox {
  /**
   * Appends entries to their shard outboxes, each shard's part as its own step under
   * `flushTimeoutMs`; answers the entries Redis acknowledged.
   */
  appendDegraded(
    entries: readonly DegradedEntry[],
    settings: Pick<DegradedLedgerOptions, 'flushTimeoutMs' | 'markerTtlMs'>,
  ): Promise<ReadonlySet<DegradedEntry>>;
  /** Work that needs the connection at shutdown (the last flush), run before it closes. */
  beforeClose(task: () => Promise<void>): void;
}
