import type { LedgerProducer, TopicMessages } from '@tally/ledger';
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { KafkaPublisher } from './kafka-publisher';
import type { OutboxStreams } from './outbox-streams';
import { RelayLifecycle } from './relay-lifecycle';
import { RelayMetrics } from './relay.metrics';
import { resolveRelayOptions } from './relay.options';

/** A producer port that refuses the first `failures` sends, as a broker that is down would. */
function flakyProducer(failures: number) {
  const sent: TopicMessages[][] = [];
  let calls = 0;
  const producer: LedgerProducer = {
    connect: () => Promise.resolve(),
    disconnect: () => Promise.resolve(),
    send: () => Promise.reject(new Error('unused')),
    sendBatch: (batch) => {
      calls++;
      if (calls <= failures) return Promise.reject(new Error('Connection error: ECONNREFUSED'));
      sent.push([...batch]);
      return Promise.resolve();
    },
  };
  return { producer, sent, calls: () => calls };
}

function setup(failures: number, shutdownGraceMs = 10_000) {
  const options = resolveRelayOptions(
    {
      redis: { mode: 'single', url: 'redis://unused' },
      shards: 1,
      topicPartitions: 1,
      topicReplication: 1,
      retryBaseMs: 1,
      retryMaxMs: 5,
      shutdownGraceMs,
    },
    () => 'test',
  );
  const metrics = new RelayMetrics(new Registry(), options, {} as OutboxStreams);
  const lifecycle = new RelayLifecycle(options, metrics);
  const flaky = flakyProducer(failures);
  const sut = new KafkaPublisher(flaky.producer, options, lifecycle, metrics);
  return { sut, lifecycle, metrics, ...flaky };
}

const batch: TopicMessages[] = [{ topic: 'tally.usage.v1', messages: [{ key: 'acme', value: '{}' }] }];

describe(KafkaPublisher.name, () => {
  it('keeps retrying through a Kafka outage, reports it, and resolves once Kafka confirmed', async () => {
    // given: a broker that refuses five sends
    const { sut, sent, calls, metrics } = setup(5);
    let failureSeen: string | undefined;
    const watcher = setInterval(() => (failureSeen ??= sut.lastFailure), 0);

    // when
    const published = await sut.publish(batch);
    clearInterval(watcher);

    // then: sent once, after six attempts; errors counted; healthy again
    expect(published).toBe(true);
    expect(calls()).toBe(6);
    expect(sent).toEqual([batch]);
    expect(failureSeen).toMatch(/ECONNREFUSED/);
    expect(sut.lastFailure).toBeUndefined();
    expect((await metrics.errors.get()).values).toEqual([
      expect.objectContaining({ labels: { stage: 'produce' }, value: 5 }),
    ]);
  });

  it('gives up only when stopping and the grace period is over (the caller then acknowledges nothing)', async () => {
    const { sut, lifecycle, sent } = setup(Number.MAX_SAFE_INTEGER, 50);
    lifecycle.stop();

    const published = await sut.publish(batch);

    expect(published).toBe(false);
    expect(sent).toEqual([]);
    expect(sut.lastFailure).toMatch(/ECONNREFUSED/);
  });
});
