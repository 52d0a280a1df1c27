// The replay bench's input, written once: the ledger bench's event distribution (allowed decisions of
// decide.lua spread over tenants), turned into the relay's own Kafka requests (one record per
// decision, the relay's keys and chunking) and produced into the bench topics of a private broker.
import { decideLua } from './built.mjs';
import { endOffsets, rawProduce, relayRequests } from './kafka-raw.mjs';
import { fillOutbox, readOutbox } from './outbox-fill.mjs';

/** Fills `topics` with `decisions` decisions' events; resolves with the number of records written. */
export async function fillReplayTopics({ redis, engine, kafka, admin }, topics, settings) {
  await admin.createTopics({
    waitForLeaders: true,
    topics: Object.values(topics).map((topic) => ({ topic, numPartitions: settings.partitions })),
  });
  const sha = await redis.script('LOAD', decideLua());
  await fillOutbox(redis, engine, sha, {
    n: settings.decisions,
    tenants: settings.tenants,
    shards: settings.shards,
  });
  const requests = relayRequests(await readOutbox(redis, engine, settings.shards), topics, {
    batchSize: settings.relayBatch,
    maxBatchBytes: settings.relayMaxBatchBytes,
  });
  await rawProduce(kafka, requests);
  // The outbox has done its job: what stays in Redis would only blur the replay's memory and keys.
  await redis.flushdb();
  return endOffsets(admin, Object.values(topics));
}
