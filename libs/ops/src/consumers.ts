import { TOPICS, type KafkaAdminPort, type ResetTarget } from '@tally/ledger';
import { PROJECTOR_GROUP, ProjectionNamespaces } from '@tally/projections';
import { OpsError } from './ops.error';
import type { RedisClient } from '@tally/redis';

/** The projector's consumer group: the projections lib owns the name. */
export { PROJECTOR_GROUP };
/** The topics the projector consumes. */
export const PROJECTOR_TOPICS: readonly string[] = [TOPICS.usage, TOPICS.decision, TOPICS.decisionV1];

export interface ConsumerMember {
  readonly memberId: string;
  readonly clientId: string;
  readonly host: string;
  readonly assignment: Readonly<Record<string, readonly number[]>>;
}

export interface ConsumerPartition {
  readonly topic: string;
  readonly partition: number;
  readonly low: string;
  readonly high: string;
  /** The group's committed offset in Kafka (next to read); null when never committed. */
  readonly committed: string | null;
  /** high − committed (everything retained when never committed). */
  readonly lag: number;
  /** Client id of the member that owns the partition now; null when none. */
  readonly owner: string | null;
  /**
   * The projector group only: the offset stored with the active namespace in Redis, which is where
   * the projector really resumes (it applies a batch and its offsets in one atomic step).
   */
  readonly stored: string | null;
  /** high − stored; null without a stored offset. */
  readonly storedLag: number | null;
}

export interface ConsumersStatus {
  readonly group: string;
  readonly state: string;
  readonly members: readonly ConsumerMember[];
  readonly partitions: readonly ConsumerPartition[];
  readonly totalLag: number;
  /** The namespace whose stored offsets were read; null for other groups or without one. */
  readonly namespace: string | null;
  /** Why the stored offsets could not be read (Redis down); the Kafka view is still shown. */
  readonly storedUnavailable?: string;
}

export interface ConsumersDeps {
  readonly admin: KafkaAdminPort;
  /** Needed only for the projector group (its offsets in Redis). */
  readonly redis?: RedisClient;
  /** The group whose offsets also live in Redis; default `PROJECTOR_GROUP` (tests use their own). */
  readonly projectorGroup?: string;
}

/** `tally consumers status`: members, assignment, committed and stored offsets, lag per partition. */
export async function consumersStatus(
  deps: ConsumersDeps,
  group: string,
  topics: readonly string[],
): Promise<ConsumersStatus> {
  const description = await deps.admin.describeGroup(group);
  const lag = await deps.admin.groupLag(group, topics);
  const owners = new Map<string, string>();
  for (const m of description.members) {
    for (const [topic, partitions] of Object.entries(m.assignment)) {
      for (const p of partitions) owners.set(`${topic}:${p}`, m.clientId);
    }
  }
  const projector = group === (deps.projectorGroup ?? PROJECTOR_GROUP);
  const { namespace, offsets, unavailable } = await storedOffsets(projector ? deps.redis : undefined);
  const partitions = lag.map((l): ConsumerPartition => {
    const stored = offsets.get(partitionId(l.topic, l.partition)) ?? null;
    return {
      topic: l.topic,
      partition: l.partition,
      low: l.low,
      high: l.high,
      committed: l.committed,
      lag: l.lag,
      owner: owners.get(`${l.topic}:${l.partition}`) ?? null,
      stored,
      storedLag: stored === null ? null : Math.max(0, Number(BigInt(l.high) - BigInt(stored))),
    };
  });
  return {
    group,
    state: description.state,
    members: description.members.map((m) => ({
      memberId: m.memberId,
      clientId: m.clientId,
      host: m.clientHost,
      assignment: m.assignment,
    })),
    partitions,
    totalLag: partitions.reduce((n, p) => n + (p.storedLag ?? p.lag), 0),
    namespace,
    ...(unavailable === undefined ? {} : { storedUnavailable: unavailable }),
  };
}

export interface ConsumersResetResult {
  readonly group: string;
  readonly partitions: readonly { topic: string; partition: number; offset: string }[];
  /** Active namespace whose stored projector offsets were set to the same positions; null if none. */
  readonly namespace: string | null;
  readonly storedOffsetsWritten: number;
}

/**
 * `tally consumers reset`: moves a STOPPED group to `to` on each topic. For the projector group the
 * offsets it keeps with the active namespace in Redis are set to the same positions, because that
 * is where it resumes (a Kafka-only reset would be ignored). Moving back re-delivers events; the
 * namespace's dedup ids drop those already applied while their hourly id sets are retained.
 * @throws OpsError while the group has members (Kafka would refuse, and a running projector would
 * overwrite the stored offsets with its next batch).
 */
export async function resetConsumers(
  deps: ConsumersDeps,
  group: string,
  topics: readonly string[],
  to: ResetTarget,
): Promise<ConsumersResetResult> {
  const description = await deps.admin.describeGroup(group);
  if (description.members.length > 0) {
    const who = description.members.map((m) => `${m.clientId}@${m.clientHost}`).join(', ');
    throw new OpsError(
      `group ${group} has ${description.members.length} running member(s) (${who}): stop every consumer of the group, then reset`,
    );
  }
  const partitions: { topic: string; partition: number; offset: string }[] = [];
  for (const topic of topics) {
    const moved = await deps.admin.resetOffsets(group, topic, to);
    partitions.push(...moved.map((m) => ({ topic, partition: m.partition, offset: m.offset })));
  }
  if (group !== (deps.projectorGroup ?? PROJECTOR_GROUP) || deps.redis === undefined) {
    return { group, partitions, namespace: null, storedOffsetsWritten: 0 };
  }
  const namespaces = new ProjectionNamespaces(deps.redis);
  const namespace = await namespaces.active();
  if (namespace === null) return { group, partitions, namespace: null, storedOffsetsWritten: 0 };
  await namespaces.storeOffsets(namespace, partitions);
  return { group, partitions, namespace, storedOffsetsWritten: partitions.length };
}

async function storedOffsets(
  redis: RedisClient | undefined,
): Promise<{ namespace: string | null; offsets: Map<string, string>; unavailable?: string }> {
  if (redis === undefined) return { namespace: null, offsets: new Map() };
  try {
    return await readStoredOffsets(redis);
  } catch (error) {
    return { namespace: null, offsets: new Map(), unavailable: (error as Error).message };
  }
}

async function readStoredOffsets(
  redis: RedisClient,
): Promise<{ namespace: string | null; offsets: Map<string, string> }> {
  const namespaces = new ProjectionNamespaces(redis);
  const namespace = await namespaces.active();
  if (namespace === null) return { namespace: null, offsets: new Map() };
  const offsets = new Map<string, string>();
  for (const o of await namespaces.storedOffsets(namespace)) {
    offsets.set(partitionId(o.topic, o.partition), o.offset);
  }
  return { namespace, offsets };
}

/** A lookup key of this module's maps (not a Redis field). */
function partitionId(topic: string, partition: number): string {
  return `${topic}/${partition}`;
}
