// Produce requests per sendBatch of the librdkafka producer (RdkafkaLedgerProducer), from librdkafka's
// own statistics (brokers[].req.Produce): librdkafka writes one partition per ProduceRequest, where
// kafkajs writes every partition a broker leads in one request per sendBatch. A figure, not a test.
// Env: KAFKA_BROKERS (a stack of your own), BENCH_BATCHES (40), BENCH_BATCH (records per sendBatch,
// 1000), BENCH_PARTITIONS (12 per topic, two topics), BENCH_RDKAFKA_LINGER_MS (50).
// Run: npm run build && scripts/rdkafka-install.sh && node test/bench/rdkafka-requests.bench.mjs
import { Kafka, logLevel } from 'kafkajs';
import { loadBuilt } from './lib/built.mjs';
import { loadRdkafka } from './lib/rdkafka.mjs';

const env = process.env;
const batches = Number(env.BENCH_BATCHES ?? 40);
const size = Number(env.BENCH_BATCH ?? 1000);
const partitions = Number(env.BENCH_PARTITIONS ?? 12);
const brokers = env.KAFKA_BROKERS.split(',');
const { RdkafkaLedgerProducer } = loadBuilt('libs/ledger/src/index.js');
const native = loadRdkafka();
const topics = [`rdk-req-a-${process.pid}`, `rdk-req-b-${process.pid}`];

const kafka = new Kafka({ brokers, logLevel: logLevel.NOTHING });
const admin = kafka.admin();
await admin.connect();
await admin.createTopics({
  waitForLeaders: true,
  topics: topics.map((topic) => ({ topic, numPartitions: partitions, replicationFactor: 1 })),
});

// The statistics callback of the same producer: a second client would count its own requests.
let produceRequests = 0;
let statsAt = 0;
let client;
class Counted extends native.Producer {
  constructor(conf, topicConf) {
    super({ ...conf, 'statistics.interval.ms': 100 }, topicConf);
    client = this;
    this.on('event.stats', ({ message }) => {
      const stats = JSON.parse(message);
      produceRequests = Object.values(stats.brokers).reduce((n, b) => n + (b.req?.Produce ?? 0), 0);
      statsAt = Date.now();
    });
  }
}
const sut = new RdkafkaLedgerProducer(
  { ...native, Producer: Counted },
  { brokers, clientId: 'rdk-req', lingerMs: Number(env.BENCH_RDKAFKA_LINGER_MS ?? 50) },
);
let n = 0;
for (let b = 0; b < batches; b++) {
  const messages = Array.from({ length: size }, () => ({ key: `t${n % 1000}`, value: `v${n++}` }));
  // Half the records on each topic, as the relay's usage and decision topics.
  await sut.sendBatch(
    topics.map((topic, i) => ({ topic, messages: messages.filter((_, j) => j % 2 === i) })),
  );
}
// Statistics are served by poll(): wait for one taken after the last batch was acknowledged.
const end = Date.now();
while (statsAt <= end + 150) {
  client.poll();
  await new Promise((r) => setTimeout(r, 20));
}
process.stdout.write(
  `[rdkafka-requests] ${batches} sendBatch calls of ${size} records over ${topics.length}×${partitions} partitions: ` +
    `${produceRequests} ProduceRequests, ${(produceRequests / batches).toFixed(1)} per sendBatch ` +
    `(kafkajs: one per broker per sendBatch)\n`,
);
await sut.disconnect();
await admin.deleteTopics({ topics });
await admin.disconnect();
