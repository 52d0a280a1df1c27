/**
 * When the ledger has drained: every outbox stream and denial hash is empty (published and
 * acknowledged) and the projection's stored offsets reach the high watermark of every partition of
 * both topics. Read straight from Redis and Kafka, the same way ProjectorLag measures lag, so no
 * metrics poll period adds to the wait.
 */
import { allShardKeys } from '@tally/engine';
import { TOPICS, type KafkaAdminPort } from '@tally/ledger';
import { ProjectionNamespaces } from '@tally/projections';
import { eventually } from '@tally/testing';
import type { Redis } from 'ioredis';

export interface Backlog {
  /** Entries in the outbox streams (pending ones included: they are deleted after Kafka confirms). */
  readonly outbox: number;
  /** Fields of the denial hashes not yet drained into coalesced decision events. */
  readonly denials: number;
  /** Records of the usage and decision topics not yet applied to the projection. */
  readonly lag: number;
}

export class DrainProbe {
  constructor(
    private readonly redis: Redis,
    private readonly admin: KafkaAdminPort,
    private readonly shards: number,
  ) {}

  async outboxLength(): Promise<number> {
    const lengths = await Promise.all(allShardKeys(this.shards).map((k) => this.redis.xlen(k.outbox)));
    return lengths.reduce((a, b) => a + b, 0);
  }

  async backlog(): Promise<Backlog> {
    const keys = allShardKeys(this.shards);
    const denials = (await Promise.all(keys.map((k) => this.redis.hlen(k.denials)))).reduce(
      (a, b) => a + b,
      0,
    );
    return { outbox: await this.outboxLength(), denials, lag: await this.lag() };
  }

  async lag(): Promise<number> {
    const namespaces = new ProjectionNamespaces(this.redis);
    const namespace = await namespaces.active();
    const stored = new Map<string, string>();
    for (const o of namespace === null ? [] : await namespaces.storedOffsets(namespace)) {
      stored.set(`${o.topic}/${o.partition}`, o.offset);
    }
    let lag = 0;
    for (const topic of [TOPICS.usage, TOPICS.decision, TOPICS.decisionV1]) {
      for (const w of await this.admin.fetchTopicOffsets(topic)) {
        const from = BigInt(stored.get(`${topic}/${w.partition}`) ?? w.low);
        if (BigInt(w.high) > from) lag += Number(BigInt(w.high) - from);
      }
    }
    return lag;
  }

  /** Polls until nothing is left anywhere; resolves with the time it took. */
  async drained(timeoutMs: number): Promise<number> {
    const started = performance.now();
    await eventually(
      () => this.backlog().catch((error: unknown) => String(error)),
      (last) => typeof last !== 'string' && last.outbox === 0 && last.denials === 0 && last.lag === 0,
      { timeoutMs, intervalMs: 100, what: 'the ledger to drain' },
    );
    return Math.round(performance.now() - started);
  }
}
