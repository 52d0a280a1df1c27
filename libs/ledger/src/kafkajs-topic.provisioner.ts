import type { Admin } from 'kafkajs';
import type { KafkajsAdminConnection } from './kafkajs-admin.connection';
import { planTopics } from './topic-plan';
import { resolveReplication } from './topics';
import type { ProvisionResult, TopicProvisioner, TopicSpec } from './topic-provisioner.port';

export class KafkajsTopicProvisioner implements TopicProvisioner {
  constructor(private readonly connection: KafkajsAdminConnection) {}

  async ensureTopics(specs: readonly TopicSpec[]): Promise<ProvisionResult> {
    const admin = await this.connection.get();
    const names = new Set(await admin.listTopics());
    const present = specs.map((s) => s.topic).filter((t) => names.has(t));
    const metadata = present.length > 0 ? (await admin.fetchTopicMetadata({ topics: present })).topics : [];
    // `auto` replication counts the brokers the cluster has now; only creation uses the figure.
    const brokers = specs.some((s) => s.replicationFactor === 'auto')
      ? (await admin.describeCluster()).brokers.length
      : 0;
    const plan = planTopics(
      specs.map((s) => resolveReplication(s, brokers)),
      metadata.map((t) => ({
        topic: t.name,
        partitions: t.partitions.length,
        replicationFactor: t.partitions[0]?.replicas.length ?? 0,
      })),
    );

    const created: string[] = [];
    const existing = [...plan.existing];
    // One request per topic: kafkajs fails a mixed request when only some topics already exist,
    // and another process may create the same topic between our listing and our request.
    for (const spec of plan.create) {
      let wasCreated: boolean;
      try {
        wasCreated = await admin.createTopics({
          waitForLeaders: true,
          topics: [
            {
              topic: spec.topic,
              numPartitions: spec.partitions,
              replicationFactor: spec.replicationFactor,
              configEntries: Object.entries(spec.configs ?? {}).map(([name, value]) => ({ name, value })),
            },
          ],
        });
      } catch (error) {
        // On a busy broker kafkajs's wait for leaders can ask before the broker's metadata has the
        // new topic ("does not host this topic-partition", retriable): created, not served yet. The
        // listing can lag the same way, so it is polled too, until the topic is served or the
        // deadline says the request really failed.
        if (!isRetriable(error)) throw error;
        await this.untilPartitions(spec.topic, spec.partitions, error);
        wasCreated = true;
      }
      (wasCreated ? created : existing).push(spec.topic);
    }
    for (const grow of plan.grow) {
      await admin.createPartitions({ topicPartitions: [grow] });
      await this.untilPartitions(grow.topic, grow.count);
    }
    return { created, existing, expanded: plan.grow.map((g) => g.topic), mismatches: plan.mismatches };
  }

  /**
   * The controller acknowledges new partitions before the brokers serve them: metadata may still
   * show the old count, or show the new partitions while their leader does not yet answer
   * ("not the leader for that topic-partition"). Waiting until every partition answers a list
   * offsets request keeps the next call from reading the old count, and the caller from reading
   * offsets of a partition nobody leads yet.
   */
  private async untilPartitions(topic: string, count: number, cause: unknown = null): Promise<void> {
    const admin: Admin = await this.connection.get();
    let last: unknown = cause;
    // A deadline, not a count of attempts: on a loaded machine one metadata round trip can take
    // seconds, and a broker busy electing leaders is slow exactly when this runs.
    const deadline = Date.now() + SERVED_WITHIN_MS;
    while (Date.now() < deadline) {
      try {
        const { topics } = await admin.fetchTopicMetadata({ topics: [topic] });
        const partitions = topics[0]?.partitions ?? [];
        if (partitions.length >= count && partitions.every((p) => p.leader >= 0)) {
          if ((await admin.fetchTopicOffsets(topic)).length >= count) return;
        }
      } catch (error) {
        if (!isRetriable(error)) throw error;
        last = error;
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const why = last instanceof Error ? ` (${last.message})` : '';
    throw new Error(`topic ${topic}: ${count} partitions not served${why}`);
  }
}

/** How long new partitions may take to be served before provisioning gives up. */
const SERVED_WITHIN_MS = 60_000;

/** kafkajs marks transient broker answers (leader moving, metadata behind) as retriable. */
function isRetriable(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as { retriable?: unknown }).retriable === true;
}
