import type { RedisTarget } from '@tally/config';
import {
  DECISION_EVENT_TYPE,
  DECISION_V2_EVENT_TYPE,
  OVERRIDE_EVENT_TYPE,
  USAGE_EVENT_TYPE,
} from '@tally/events';
import type { TopicSpec } from '@tally/ledger';

/** The Kafka topics the projector reads and dead-letters to (production: `TOPICS` of @tally/ledger). */
export interface ProjectorTopics {
  /** `tally.usage.v1`: usage, and the audit rows of degraded and shadow would-deny decisions. */
  readonly usage: string;
  /** `tally.decision.v2` records (denials) and override changes. */
  readonly decision: string;
  /**
   * The decision topic of the first contract (`tally.decision.v1` records and override changes),
   * read for its history; absent: not read.
   */
  readonly decisionV1?: string;
  readonly deadLetter: string;
}

/** The topics whose records are folded, in a fixed order. */
export function foldedTopics(topics: Omit<ProjectorTopics, 'deadLetter'>): string[] {
  return [topics.usage, topics.decision, ...(topics.decisionV1 === undefined ? [] : [topics.decisionV1])];
}

/**
 * The event types each folded topic carries (`sortBatch`): a record of another type on it is
 * dead-lettered. Override changes ride on the decision topic of either contract.
 */
export function topicEventTypes(
  topics: Omit<ProjectorTopics, 'deadLetter'>,
): Record<string, string | readonly string[]> {
  return {
    [topics.usage]: USAGE_EVENT_TYPE,
    [topics.decision]: [DECISION_V2_EVENT_TYPE, OVERRIDE_EVENT_TYPE],
    ...(topics.decisionV1 === undefined
      ? {}
      : { [topics.decisionV1]: [DECISION_EVENT_TYPE, OVERRIDE_EVENT_TYPE] }),
  };
}

export interface ProjectorOptions {
  readonly redis: RedisTarget;
  /** Consumer group; production: `PROJECTOR_GROUP`. Tests use their own. */
  readonly groupId: string;
  readonly topics: ProjectorTopics;
  /** Created (idempotently) before consuming; production: `ledgerTopicSpecs(config)`. */
  readonly topicSpecs: readonly TopicSpec[];
  /** Audit rows older than this are trimmed as new ones are written (`TALLY_AUDIT_RETENTION`). */
  readonly auditRetentionMs: number;
  /** Created and made active on first start, when no namespace is active yet. Default `live`. */
  readonly defaultNamespace?: string;
  /** False: queries only (no consumer), e.g. a read replica of the query API. Default true. */
  readonly consume?: boolean;
  /** How long after its last write a dedup set is kept. Default 48 h. */
  readonly dedupTtlMs?: number;
  /** Default 3: batches of different partitions are applied concurrently (one Redis step each). */
  readonly partitionsConsumedConcurrently?: number;
  /** How often lag (and with it Kafka's health) is measured. Default 5 s. */
  readonly lagPollMs?: number;
  /** How often the active-namespace pointer is re-read (a `projections switch`). Default 5 s. */
  readonly namespacePollMs?: number;
  readonly sessionTimeoutMs?: number;
  readonly heartbeatIntervalMs?: number;
  /** Longest a fetch waits for data; also bounds how long a graceful stop waits. Default 1 s. */
  readonly maxWaitTimeMs?: number;
  /**
   * Bytes a fetch waits for, up to `maxWaitTimeMs`, before the broker answers. Default 1: answer as
   * soon as any record exists (the lowest lag).
   */
  readonly fetchMinBytes?: number;
  /**
   * Kafka offset commits (visibility only: Redis holds the offsets the projector resumes from) at
   * most this often, each carrying the latest offset of every partition stepped since the last one.
   * 0 = one commit per Redis step (≈ 100–250 a second at 2,000 decisions/s). Default 1 s.
   */
  readonly commitIntervalMs?: number;
  /**
   * Fetch sizes. Default 4 MiB per partition and 32 MiB per fetch: kafkajs fetches again only once
   * every batch of the last fetch is handled, so large fetches keep the workers busy between fetches
   * and give each batch more events to sum; the step budget below still bounds each Redis step.
   */
  readonly maxBytesPerPartition?: number;
  readonly maxBytes?: number;
  /**
   * Cells (fields, members, dedup tokens, audit rows) per atomic Redis step. Default 12 000. Redis is
   * single-threaded and also serves the decision hot path; a step blocks it for its whole run. In the
   * ledger bench (~10 cells per usage event, 1 per decision event), on a 2-core host at load 2–4:
   * 12 000 cells ≈ 38 ms a step (median; max ~60 ms), 6000 ≈ 23 ms, 16 000 ≈ 60–70 ms. Smaller
   * steps cost throughput there (21k vs 24k events/s at 6000 vs 12 000 cells), as each step writes
   * the per-tenant totals again; steps of events that share cells hold many more events.
   */
  readonly stepCells?: number;
}

export type ResolvedProjectorOptions = Required<ProjectorOptions>;

const HOUR_MS = 3_600_000;
const MIB = 1024 * 1024;

export function resolveProjectorOptions(options: ProjectorOptions): ResolvedProjectorOptions {
  return {
    defaultNamespace: 'live',
    consume: true,
    dedupTtlMs: 48 * HOUR_MS,
    partitionsConsumedConcurrently: 3,
    lagPollMs: 5_000,
    namespacePollMs: 5_000,
    sessionTimeoutMs: 30_000,
    heartbeatIntervalMs: 3_000,
    maxWaitTimeMs: 1_000,
    fetchMinBytes: 1,
    commitIntervalMs: 1_000,
    maxBytesPerPartition: 4 * MIB,
    maxBytes: 32 * MIB,
    stepCells: 12_000,
    ...options,
  };
}
