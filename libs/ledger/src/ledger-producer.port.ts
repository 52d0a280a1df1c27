export interface LedgerMessage {
  /** Partitioning key: the tenant (else the decision key), so one tenant's events stay in order. */
  readonly key: string;
  readonly value: Buffer | string;
  readonly headers?: Readonly<Record<string, string>>;
}

export interface TopicMessages {
  readonly topic: string;
  readonly messages: readonly LedgerMessage[];
}

/** How one sendBatch is written: `gzip` compresses each record batch (kafkajs's built-in codec). */
export interface SendOptions {
  readonly compression?: 'none' | 'gzip';
}

/**
 * Writes to the ledger. Resolves only once every replica in sync has the messages (acks=all) and
 * with the idempotent producer, so a retried send never duplicates or reorders within a partition.
 * It also rejects when a partition of the batch went unacknowledged (a leader moved mid-send): a
 * rejection means nothing can be assumed, the caller keeps its copy and sends again.
 */
export interface LedgerProducer {
  connect(): Promise<void>;
  send(topic: string, messages: readonly LedgerMessage[]): Promise<void>;
  sendBatch(topicMessages: readonly TopicMessages[], options?: SendOptions): Promise<void>;
  disconnect(): Promise<void>;
}
