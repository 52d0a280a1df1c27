// The raw ceilings of the ledger: what kafkajs alone does with the same messages and settings.
//   producer: the relay's producer settings (idempotent, one request in flight, acks=all, murmur2
//             partitioner), the relay's batches (1000 entries → their usage + decision events,
//             chunked to the relay's 512 KiB per request), one request at a time like the relay;
//   consumer: a group reading the same topics with the projector's fetch settings and concurrency,
//             doing nothing with the records.
import kafkajs from 'kafkajs';
import { loadBuilt } from './built.mjs';

const { Kafka, Partitioners, logLevel } = kafkajs;
const ACKS_ALL = -1;

export function kafkaOf(brokers) {
  return new Kafka({
    clientId: 'tally-ledger-bench',
    brokers: brokers.split(','),
    logLevel: logLevel.NOTHING,
  });
}

/** Sum of high watermarks over `topics` (records ever written, as the topics start at offset 0). */
export async function endOffsets(admin, topics) {
  let sum = 0;
  for (const topic of topics) for (const p of await admin.fetchTopicOffsets(topic)) sum += Number(p.high);
  return sum;
}

/** The relay's Kafka requests for `entries`: its own message builders and chunking, from dist/. */
export function relayRequests(entries, topics, { batchSize, maxBatchBytes }) {
  const events = loadBuilt('libs/events/src/index.js');
  const { eventMessage, chunkTopicMessages } = loadBuilt('libs/outbox/src/outbox-batch.js');
  const requests = [];
  for (let i = 0; i < entries.length; i += batchSize) {
    const usage = [];
    const decision = [];
    for (const entry of entries.slice(i, i + batchSize)) {
      // One record per entry, as the relay builds it: usage, or (a denied entry) a decision.v2.
      const event = events.ledgerEventFromOutbox(entry);
      (event.type === events.USAGE_EVENT_TYPE ? usage : decision).push(eventMessage(event));
    }
    const topicMessages = [
      { topic: topics.usage, messages: usage },
      { topic: topics.decision, messages: decision },
    ];
    for (const chunk of chunkTopicMessages(topicMessages, maxBatchBytes)) {
      requests.push(
        chunk.map((t) => ({
          topic: t.topic,
          messages: t.messages.map((m) => ({ key: m.key, value: m.value, headers: { ...m.headers } })),
        })),
      );
    }
  }
  return requests;
}

/** Sends `requests` one after the other with the relay's producer settings; events/s. */
export async function rawProduce(kafka, requests) {
  const producer = kafka.producer({
    idempotent: true,
    maxInFlightRequests: 1,
    allowAutoTopicCreation: false,
    createPartitioner: Partitioners.DefaultPartitioner,
  });
  await producer.connect();
  try {
    let events = 0;
    const started = performance.now();
    for (const topicMessages of requests) {
      await producer.sendBatch({ acks: ACKS_ALL, topicMessages });
      for (const t of topicMessages) events += t.messages.length;
    }
    const seconds = (performance.now() - started) / 1000;
    return { events, seconds: round3(seconds), eventsPerSec: Math.round(events / seconds) };
  } finally {
    await producer.disconnect();
  }
}

/**
 * Reads `total` records of `topics` from the beginning in a fresh group, processing nothing; the rate
 * runs from the first batch to the last (joining the group is not reading).
 */
export async function rawConsume(kafka, topics, total, { partitionsConsumedConcurrently, maxWaitTimeMs }) {
  const consumer = kafka.consumer({
    groupId: `bench-raw-${process.pid}-${Date.now()}`,
    maxWaitTimeInMs: maxWaitTimeMs,
    allowAutoTopicCreation: false,
  });
  await consumer.connect();
  let count = 0;
  let first = 0;
  let firstBatch = 0;
  let last = 0;
  let done;
  const finished = new Promise((resolve) => (done = resolve));
  try {
    await consumer.subscribe({ topics, fromBeginning: true });
    await consumer.run({
      autoCommit: false,
      eachBatchAutoResolve: true,
      partitionsConsumedConcurrently,
      eachBatch: async ({ batch }) => {
        if (first === 0) {
          first = performance.now();
          firstBatch = batch.messages.length;
        }
        count += batch.messages.length;
        last = performance.now();
        if (count >= total) done();
      },
    });
    const timeout = setTimeout(done, 300_000);
    await finished;
    clearTimeout(timeout);
  } finally {
    await consumer.disconnect();
  }
  // The first batch's records were fetched before `first`: they are not in the timed span.
  const seconds = (last - first) / 1000;
  return {
    events: count,
    seconds: round3(seconds),
    eventsPerSec: Math.round((count - firstBatch) / seconds),
  };
}

function round3(n) {
  return Math.round(n * 1000) / 1000;
}
