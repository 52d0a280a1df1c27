/** Offsets are int64 decimal strings, as Kafka reports them. */
export interface PartitionOffset {
  readonly partition: number;
  readonly offset: string;
}

export interface TopicPartitionOffsets {
  readonly topic: string;
  readonly partition: number;
  /** Earliest retained offset. */
  readonly low: string;
  /** High watermark: the offset of the next record. */
  readonly high: string;
}

export interface CommittedOffset {
  readonly topic: string;
  readonly partition: number;
  /** Next offset the group reads; `null` when the group never committed on this partition. */
  readonly offset: string | null;
}

export interface PartitionLag extends TopicPartitionOffsets {
  readonly committed: string | null;
  /** high − committed; without a commit, everything retained (high − low). */
  readonly lag: number;
}

export interface GroupMember {
  readonly memberId: string;
  readonly clientId: string;
  readonly clientHost: string;
  readonly assignment: Readonly<Record<string, readonly number[]>>;
}

export interface GroupDescription {
  readonly groupId: string;
  /** Kafka's group state: `Stable`, `Empty`, `PreparingRebalance`, `CompletingRebalance`, `Dead`… */
  readonly state: string;
  readonly members: readonly GroupMember[];
}

export interface ClusterDescription {
  readonly clusterId: string;
  readonly controller: number | null;
  readonly brokers: readonly { nodeId: number; host: string; port: number }[];
}

export type ResetTarget = 'earliest' | 'latest' | { readonly timestamp: number };

/** Operator views of groups and topics (`tally consumers status|reset`, readiness). */
export interface KafkaAdminPort {
  describeCluster(): Promise<ClusterDescription>;
  describeGroup(groupId: string): Promise<GroupDescription>;
  fetchCommittedOffsets(groupId: string, topics: readonly string[]): Promise<CommittedOffset[]>;
  fetchTopicOffsets(topic: string): Promise<TopicPartitionOffsets[]>;
  /** First offset per partition whose timestamp is ≥ `timestamp` (the high watermark when none). */
  fetchTopicOffsetsByTimestamp(topic: string, timestamp: number): Promise<PartitionOffset[]>;
  groupLag(groupId: string, topics: readonly string[]): Promise<PartitionLag[]>;
  /** Moves a stopped group's committed offsets; Kafka refuses while members are running. */
  resetOffsets(groupId: string, topic: string, to: ResetTarget): Promise<PartitionOffset[]>;
  /** Deletes topics (test runs, abandoned replay topics); missing topics are an error. */
  deleteTopics(topics: readonly string[]): Promise<void>;
  disconnect(): Promise<void>;
}
