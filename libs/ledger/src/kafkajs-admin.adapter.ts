import { AssignerProtocol } from 'kafkajs';
import type { KafkajsAdminConnection } from './kafkajs-admin.connection';
import type {
  ClusterDescription,
  CommittedOffset,
  GroupDescription,
  KafkaAdminPort,
  PartitionLag,
  PartitionOffset,
  ResetTarget,
  TopicPartitionOffsets,
} from './kafka-admin.port';
import { computeLag } from './lag';

const byPartition = <T extends { partition: number }>(a: T, b: T): number => a.partition - b.partition;

/** Empty while the group is rebalancing: members are known but not yet assigned. */
function decodeAssignment(raw: Buffer): Record<string, number[]> {
  const decoded = raw.length > 0 ? AssignerProtocol.MemberAssignment.decode(raw) : null;
  return Object.fromEntries(
    Object.entries(decoded?.assignment ?? {}).map(([topic, partitions]) => [
      topic,
      [...partitions].sort((a, b) => a - b),
    ]),
  );
}

export class KafkajsAdminAdapter implements KafkaAdminPort {
  constructor(private readonly connection: KafkajsAdminConnection) {}

  async describeCluster(): Promise<ClusterDescription> {
    const admin = await this.connection.get();
    return admin.describeCluster();
  }

  async describeGroup(groupId: string): Promise<GroupDescription> {
    const admin = await this.connection.get();
    const { groups } = await admin.describeGroups([groupId]);
    const group = groups[0];
    return {
      groupId,
      state: group.state,
      members: group.members.map((m) => ({
        memberId: m.memberId,
        clientId: m.clientId,
        clientHost: m.clientHost,
        assignment: decodeAssignment(m.memberAssignment),
      })),
    };
  }

  async fetchCommittedOffsets(groupId: string, topics: readonly string[]): Promise<CommittedOffset[]> {
    const admin = await this.connection.get();
    const answer = await admin.fetchOffsets({ groupId, topics: [...topics] });
    return answer.flatMap(({ topic, partitions }) =>
      partitions
        .map((p) => ({ topic, partition: p.partition, offset: BigInt(p.offset) < 0n ? null : p.offset }))
        .sort(byPartition),
    );
  }

  async fetchTopicOffsets(topic: string): Promise<TopicPartitionOffsets[]> {
    const admin = await this.connection.get();
    const offsets = await admin.fetchTopicOffsets(topic);
    return offsets
      .map((o) => ({ topic, partition: o.partition, low: o.low, high: o.high }))
      .sort(byPartition);
  }

  async fetchTopicOffsetsByTimestamp(topic: string, timestamp: number): Promise<PartitionOffset[]> {
    const admin = await this.connection.get();
    const offsets = await admin.fetchTopicOffsetsByTimestamp(topic, timestamp);
    return offsets.map((o) => ({ partition: o.partition, offset: o.offset })).sort(byPartition);
  }

  async groupLag(groupId: string, topics: readonly string[]): Promise<PartitionLag[]> {
    const watermarks = (await Promise.all(topics.map((t) => this.fetchTopicOffsets(t)))).flat();
    return computeLag(watermarks, await this.fetchCommittedOffsets(groupId, topics));
  }

  async resetOffsets(groupId: string, topic: string, to: ResetTarget): Promise<PartitionOffset[]> {
    // Concrete offsets rather than the client's earliest/latest markers, so the commit says
    // exactly where the group resumes and the caller can print it.
    const partitions =
      typeof to === 'object'
        ? await this.fetchTopicOffsetsByTimestamp(topic, to.timestamp)
        : (await this.fetchTopicOffsets(topic)).map((o) => ({
            partition: o.partition,
            offset: to === 'earliest' ? o.low : o.high,
          }));
    const admin = await this.connection.get();
    await admin.setOffsets({ groupId, topic, partitions });
    return partitions;
  }

  async deleteTopics(topics: readonly string[]): Promise<void> {
    if (topics.length === 0) return;
    const admin = await this.connection.get();
    await admin.deleteTopics({ topics: [...topics] });
  }

  async disconnect(): Promise<void> {
    await this.connection.disconnect();
  }
}
