/** One namespace as `tally projections list` shows it. */
export interface NamespaceInfo {
  readonly name: string;
  readonly active: boolean;
  readonly events: number;
  /** Last write, ISO 8601; null before the first batch. */
  readonly updated: string | null;
  /** Shards it is divided into (0: written before shards, rebuild it by a replay). */
  readonly shards: number;
  /** `running` while a replay writes it, `complete` after; absent for projector-made namespaces. */
  readonly replay?: string;
}

/** A partition's resume position as stored with a namespace: the next offset to consume. */
export interface StoredOffset {
  readonly topic: string;
  readonly partition: number;
  readonly offset: string;
}

/** The range of event time a replayed namespace holds (epoch ms); absent bounds are unbounded. */
export interface NamespaceCoverage {
  readonly from?: number;
  readonly to?: number;
}

/** What `tally replay` records when it starts writing a namespace. */
export interface ReplayStart {
  /** Redis server time the replay started (the namespace's `created`). */
  readonly startedMs: number;
  readonly coveredFrom: number;
  readonly coveredTo: number;
  /** Shards to divide it into (`ProjectionNamespaces.ensureShards`): the topics' partition count. */
  readonly shards: number;
}
