// Kafka's own Java producer (`ProducerPerformance`, org.apache.kafka:kafka-tools) at the relay's
// rate and record size: the reference for what a client alone costs per record, and the broker with
// it. Tally's own records (from tally.usage.v1) are the payloads; the topic has 24 partitions (the
// relay's two topics of 12), RoundRobinPartitioner standing in for tenant keys. CPU of the java
// process and of the broker (minus its idle rate) from /proc over a window after a warm-up. A figure, not a test.
// Env: KAFKA_BROKERS and BENCH_BROKER_PID (a stack of your own), BENCH_REF_RATE (2000),
// BENCH_REF_WARMUP (10 s), BENCH_REF_SECONDS (20 s), BENCH_REF_PROPS (extra producer properties,
// default linger.ms=50 batch.size=262144), KAFKA_TOOLS_JAR (default: the one `mvn dependency:get
// -Dartifact=org.apache.kafka:kafka-tools:3.9.1` puts in ~/.m2).
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Kafka, logLevel } from 'kafkajs';
import { ROOT } from './lib/built.mjs';
import { cpuSnapshot, cpuSpentMs } from './lib/proc-cpu.mjs';

const env = process.env;
const rate = Number(env.BENCH_REF_RATE ?? 2000);
const warmup = Number(env.BENCH_REF_WARMUP ?? 10);
const seconds = Number(env.BENCH_REF_SECONDS ?? 20);
const brokerPid = Number(env.BENCH_BROKER_PID);
const jar =
  env.KAFKA_TOOLS_JAR ??
  join(homedir(), '.m2/repository/org/apache/kafka/kafka-tools/3.9.1/kafka-tools-3.9.1.jar');
const props = (env.BENCH_REF_PROPS ?? 'linger.ms=50 batch.size=262144').split(' ').filter(Boolean);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const log = (line) => process.stdout.write(`[producer-reference] ${line}\n`);

const kafka = new Kafka({ brokers: env.KAFKA_BROKERS.split(','), logLevel: logLevel.NOTHING });
// Tally's records as payloads, one per line.
const payloads = [];
const consumer = kafka.consumer({ groupId: `producer-reference-${process.pid}` });
await consumer.connect();
await consumer.subscribe({ topic: 'tally.usage.v1', fromBeginning: true });
await consumer.run({ eachMessage: async ({ message }) => void payloads.push(String(message.value)) });
while (payloads.length < 2000) await sleep(100);
await consumer.disconnect();
const file = join(tmpdir(), `tally-payloads-${process.pid}.txt`);
writeFileSync(file, payloads.slice(0, 2000).join('\n'));
const bytes = payloads.slice(0, 2000).reduce((n, p) => n + Buffer.byteLength(p), 0) / 2000;

const topic = `producer-reference-${process.pid}`;
const admin = kafka.admin();
await admin.connect();
await admin.createTopics({
  waitForLeaders: true,
  topics: [{ topic, numPartitions: 24, replicationFactor: 1 }],
});

// The broker's own idle rate, subtracted below: what remains is what the records cost it.
const idle0 = cpuSnapshot([brokerPid]);
await sleep(10_000);
const brokerIdleMsPerS = cpuSpentMs(idle0, cpuSnapshot([brokerPid])) / 10;

const libs = join(ROOT, '.local/kafka-dist/libs/*');
const java = spawn(
  'java',
  [
    '-cp',
    `${libs}:${jar}`,
    'org.apache.kafka.tools.ProducerPerformance',
    '--topic',
    topic,
    '--num-records',
    String(rate * (warmup + seconds + 5)),
    '--throughput',
    String(rate),
    '--payload-file',
    file,
    '--producer-props',
    `bootstrap.servers=${env.KAFKA_BROKERS}`,
    'acks=all',
    'enable.idempotence=true',
    'partitioner.class=org.apache.kafka.clients.producer.RoundRobinPartitioner',
    ...props,
  ],
  { stdio: ['ignore', 'pipe', 'pipe'] },
);
let out = '';
java.stdout.on('data', (c) => (out += c));
java.stderr.on('data', (c) => (out += c));
await sleep(warmup * 1000);
const before = [cpuSnapshot([java.pid]), cpuSnapshot([brokerPid])];
const offsets0 = await admin.fetchTopicOffsets(topic);
await sleep(seconds * 1000);
const after = [cpuSnapshot([java.pid]), cpuSnapshot([brokerPid])];
const offsets1 = await admin.fetchTopicOffsets(topic);
const records = offsets1.reduce((n, p, i) => n + Number(p.high) - Number(offsets0[i].high), 0);
const us = (ms) => ((ms * 1000) / records).toFixed(1);
log(
  `${records} records of ${Math.round(bytes)} B in ${seconds} s (${props.join(' ')}): ` +
    `java producer ${us(cpuSpentMs(before[0], after[0]))} µs CPU/record, broker ${us(cpuSpentMs(before[1], after[1]) - brokerIdleMsPerS * seconds)} µs/record ` +
    `(its idle ${brokerIdleMsPerS.toFixed(1)} ms/s subtracted)`,
);
java.kill('SIGTERM');
await new Promise((r) => java.once('exit', r));
if (!/records sent/.test(out)) log(`ProducerPerformance said:\n${out.slice(-1500)}`);
await admin.deleteTopics({ topics: [topic] });
await admin.disconnect();
