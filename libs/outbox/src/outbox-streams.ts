import { Inject, Injectable } from '@nestjs/common';
import { RELAY_GROUP, RELAY_OPTIONS, RELAY_REDIS } from './outbox.constants';
import type { ReadCall } from './read-plan';
import type { RelayRedis } from './relay-redis';
import type { ResolvedRelayOptions } from './relay.options';
import {
  parseClaimReply,
  parseReadReply,
  streamIdMs,
  type ClaimedEntries,
  type StreamEntry,
} from './stream-entries';

/** Outbox size as the metrics report it. */
export interface OutboxStats {
  /** Entries in every stream: not yet published, or published but not yet deleted. */
  readonly length: number;
  /** Entries delivered to a relay and not yet acknowledged. */
  readonly pending: number;
  /** Age of the oldest entry of any stream against the Redis clock; 0 when every stream is empty. */
  readonly oldestAgeMs: number;
}

/**
 * The outbox streams through the `tally-relay` consumer group. Every command names keys of one
 * stream (one hash tag) except the single-node multi-stream XREADGROUP, so this works on Cluster.
 */
@Injectable()
export class OutboxStreams {
  constructor(
    @Inject(RELAY_REDIS) private readonly redis: RelayRedis,
    @Inject(RELAY_OPTIONS) private readonly options: ResolvedRelayOptions,
  ) {}

  /**
   * Creates the group on every stream, at id 0 so entries the engine appended before any relay ever
   * ran are delivered too (`$` would skip them). MKSTREAM: the group must exist before the stream's
   * first entry. An existing group (BUSYGROUP) is left as it is, with its pending entries.
   */
  async ensureGroups(streams: readonly string[]): Promise<void> {
    await Promise.all(
      streams.map((key) =>
        this.redis.commands
          .call('XGROUP', 'CREATE', key, RELAY_GROUP, '0', 'MKSTREAM')
          .catch((e: unknown) => {
            if (!(e instanceof Error && e.message.startsWith('BUSYGROUP'))) throw e;
          }),
      ),
    );
  }

  /** New entries (never delivered to any consumer of the group), for this consumer. */
  async read(calls: readonly ReadCall[]): Promise<StreamEntry[]> {
    const replies = await Promise.all(
      calls.map((call) =>
        this.redis.reader.call(
          'XREADGROUP',
          'GROUP',
          RELAY_GROUP,
          this.options.consumerName,
          'COUNT',
          call.count,
          ...(call.blockMs === undefined ? [] : ['BLOCK', call.blockMs]),
          'STREAMS',
          ...call.keys,
          ...call.keys.map(() => '>'),
        ),
      ),
    );
    return replies.flatMap(parseReadReply);
  }

  /** Takes over entries pending longer than `minIdleMs` in any consumer (a dead relay's batch). */
  async claim(stream: string, cursor: string, count: number): Promise<ClaimedEntries> {
    const reply = await this.redis.commands.call(
      'XAUTOCLAIM',
      stream,
      RELAY_GROUP,
      this.options.consumerName,
      this.options.claimMinIdleMs,
      cursor,
      'COUNT',
      count,
    );
    return parseClaimReply(stream, reply);
  }

  /**
   * XACK then XDEL of every stream of a batch in one round trip: one pipeline on a single node; on
   * Cluster (a pipeline may only name one node's slots, and ioredis checks it per slot) one pipeline
   * per stream, all sent at once, so the batch still waits one round trip. Acknowledged first: an
   * entry deleted but still pending would only be an empty id in the pending list, and an entry
   * acknowledged and not deleted is harmless too (it is never delivered again), so the order is
   * about tidiness, not safety. Deleting is what keeps the outbox from growing.
   */
  async acknowledge(acks: ReadonlyMap<string, readonly string[]>): Promise<void> {
    const groups = this.redis.cluster ? [...acks].map((a) => [a]) : [[...acks]];
    await Promise.all(
      groups.map(async (streams) => {
        const pipeline = this.redis.commands.pipeline();
        for (const [stream, ids] of streams) pipeline.xack(stream, RELAY_GROUP, ...ids).xdel(stream, ...ids);
        const failed = (await pipeline.exec())?.find(([error]) => error !== null);
        if (failed) throw failed[0] as Error;
      }),
    );
  }

  /**
   * The streams that may hold orphaned entries: those whose oldest pending entry was appended at
   * least `minIdleMs` ago (Redis clock). An entry's idle time counts from its last delivery, which is
   * never before its append, so a stream left out here has nothing XAUTOCLAIM would take, and a healthy
   * relay's streams (everything pending is fresh) cost one XPENDING summary each instead of a claim.
   */
  async orphanCandidates(streams: readonly string[], minIdleMs: number): Promise<string[]> {
    const summaries = await this.each(streams, (key) => ['XPENDING', key, RELAY_GROUP]);
    const now = await this.timeMs();
    return streams.filter((_, i) => {
      const summary = summaries[i] as [number, string | null] | undefined;
      return summary !== undefined && Number(summary[0]) > 0 && summary[1] !== null
        ? now - streamIdMs(summary[1]) >= minIdleMs
        : false;
    });
  }

  /**
   * One command per key, in one round trip (a pipeline on a single node, concurrent commands on
   * Cluster). A stream without the group yet (NOGROUP) answers undefined; any other error throws.
   */
  async each(keys: readonly string[], command: (key: string) => [string, ...string[]]): Promise<unknown[]> {
    if (this.redis.cluster) {
      return Promise.all(
        keys.map((key) => {
          const [name, ...args] = command(key);
          return this.redis.commands.call(name, ...args).catch(noGroup);
        }),
      );
    }
    const pipeline = this.redis.commands.pipeline();
    for (const key of keys) {
      const [name, ...args] = command(key);
      pipeline.call(name, ...args);
    }
    const results = (await pipeline.exec()) ?? [];
    return results.map(([error, reply]) => (error === null ? reply : noGroup(error)));
  }

  /** The Redis clock, epoch ms: the same clock the decision script stamps entries with. */
  async timeMs(): Promise<number> {
    const [seconds, micros] = (await this.redis.commands.call('TIME')) as [string, string];
    return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
  }

  async stats(streams: readonly string[]): Promise<OutboxStats> {
    const now = await this.timeMs();
    const perStream = await Promise.all(
      streams.map(async (key) => {
        const results = await this.redis.commands
          .pipeline()
          .xlen(key)
          .xrange(key, '-', '+', 'COUNT', 1)
          .call('XPENDING', key, RELAY_GROUP)
          .exec();
        const [[, length], [, first], [pendingError, pending]] = results as [
          [Error | null, number],
          [Error | null, [string, string[]][]],
          [Error | null, [number, ...unknown[]] | null],
        ];
        const oldest = first.length > 0 ? streamIdMs(first[0][0]) : undefined;
        // NOGROUP before the relay created its group: nothing is pending yet.
        return { length, oldest, pending: pendingError === null && pending ? Number(pending[0]) : 0 };
      }),
    );
    const oldest = Math.min(...perStream.map((s) => s.oldest ?? Infinity));
    return {
      length: perStream.reduce((n, s) => n + s.length, 0),
      pending: perStream.reduce((n, s) => n + s.pending, 0),
      oldestAgeMs: Number.isFinite(oldest) ? Math.max(0, now - oldest) : 0,
    };
  }
}

function noGroup(error: unknown): undefined {
  if (error instanceof Error && error.message.startsWith('NOGROUP')) return undefined;
  throw error;
}
