export interface TopicSpec {
  readonly topic: string;
  readonly partitions: number;
  /** `auto`: from the broker count when the topic is created (`autoReplication`). */
  readonly replicationFactor: number | 'auto';
  /** Topic configs applied on creation only (e.g. `retention.ms`); existing topics are not altered. */
  readonly configs?: Readonly<Record<string, string>>;
}

/** A spec whose replication the provisioner has resolved against the cluster. */
export type ResolvedTopicSpec = TopicSpec & { readonly replicationFactor: number };

/** An existing topic that differs from its spec in a way provisioning will not change. */
export interface TopicMismatch {
  readonly topic: string;
  readonly setting: 'partitions' | 'replicationFactor';
  readonly expected: number;
  readonly actual: number;
}

export interface ProvisionResult {
  /** Topics that did not exist and were created. */
  readonly created: string[];
  /** Topics that were already there (with or without differences). */
  readonly existing: string[];
  /** Existing topics grown to the spec's partition count. */
  readonly expanded: string[];
  /** Differences left as they are: Kafka cannot shrink partitions or change replication here. */
  readonly mismatches: TopicMismatch[];
}

/** Creates topics idempotently: a second call with the same specs creates nothing. */
export interface TopicProvisioner {
  ensureTopics(specs: readonly TopicSpec[]): Promise<ProvisionResult>;
}
