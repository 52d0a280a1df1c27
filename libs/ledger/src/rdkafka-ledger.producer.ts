import type { LedgerMessage, LedgerProducer, SendOptions, TopicMessages } from './ledger-producer.port';
import type { RdkafkaDeliveryReport, RdkafkaError, RdkafkaNative, RdkafkaProducer } from './rdkafka-native';

/** librdkafka's code for a fatal error: the idempotent producer's state is lost, the client is dead. */
const ERR_FATAL = -150;
/** How long one flush waits before it is called again (the batch still waits for every report). */
const FLUSH_SLICE_MS = 1000;

export interface RdkafkaProducerOptions {
  readonly brokers: readonly string[];
  readonly clientId: string;
  /**
   * librdkafka's linger.ms: the wait before a partly filled batch goes out. Each sendBatch ends in a
   * flush, which sends at once, so this only keeps records from leaving while sendBatch is still
   * handing them over (one request per broker per batch instead of a trickle).
   */
  readonly lingerMs?: number;
  /** The codec is a client setting in librdkafka, not a per-request one: fixed here, at creation. */
  readonly compression?: SendOptions['compression'];
  /**
   * message.timeout.ms: how long librdkafka retries a record before its delivery report fails. 30 s
   * is about what kafkajs's retries take before its sendBatch rejects, so the relay's retry loop
   * sees an outage at the same pace with either client.
   */
  readonly messageTimeoutMs?: number;
}

/** One sendBatch: settled once every record of it has its delivery report. */
class PendingBatch {
  private left: number;
  private failure?: string;
  readonly settled: Promise<void>;
  private resolve!: () => void;
  private reject!: (error: Error) => void;

  constructor(records: number) {
    this.left = records;
    this.settled = new Promise((resolve, reject) => {
      this.resolve = resolve;
      this.reject = reject;
    });
  }

  report(error: RdkafkaError | null | undefined, report: RdkafkaDeliveryReport): void {
    if (error && this.failure === undefined) {
      this.failure = `${report.topic}[${report.partition}]: ${error.message} (code ${error.code})`;
    }
    if (--this.left > 0) return;
    if (this.failure === undefined) this.resolve();
    else this.reject(new Error(`Kafka did not acknowledge every record of the batch: ${this.failure}`));
  }

  /** Fewer records than planned were handed over (produce threw part-way): wait for those only. */
  handedOnly(records: number, planned: number): void {
    this.left -= planned - records;
  }

  get done(): boolean {
    return this.left <= 0;
  }
}

/**
 * {@link LedgerProducer} on librdkafka (node-rdkafka), with the kafkajs producer's guarantees:
 * idempotent, acks=all, per-partition order (librdkafka's idempotent producer keeps order with up to
 * 5 requests in flight), Java's murmur2 partitioner for keyed records (what kafkajs's default
 * partitioner computes), and a sendBatch that resolves only when every record of it is acknowledged
 * and rejects, whole, when any is not: the relay then sends the batch again, as it does with kafkajs.
 * Only the librdkafka comparison bench and its test use it; the relay is wired to kafkajs. The native
 * module is passed in (installed apart by scripts/rdkafka-install.sh, never a dependency of the tree).
 */
export class RdkafkaLedgerProducer implements LedgerProducer {
  private client?: RdkafkaProducer;
  private connected?: Promise<RdkafkaProducer>;
  private fatal?: string;

  constructor(
    private readonly native: RdkafkaNative,
    private readonly options: RdkafkaProducerOptions,
  ) {}

  connect(): Promise<void> {
    return this.connection().then(() => undefined);
  }

  async send(topic: string, messages: readonly LedgerMessage[]): Promise<void> {
    await this.sendBatch([{ topic, messages }]);
  }

  async sendBatch(topicMessages: readonly TopicMessages[], _options: SendOptions = {}): Promise<void> {
    const count = topicMessages.reduce((n, t) => n + t.messages.length, 0);
    if (count === 0) return;
    const client = await this.connection();
    const batch = new PendingBatch(count);
    let handed = 0;
    try {
      for (const { topic, messages } of topicMessages) {
        for (const m of messages) {
          // Partition -1: librdkafka's partitioner picks it from the key (murmur2, as Java and kafkajs).
          client.produce(topic, -1, toBuffer(m.value), m.key, null, batch, toHeaders(m.headers));
          handed++;
        }
      }
    } catch (error) {
      // Queue full or a record refused up front: the records already handed over still get their
      // reports; the batch fails whole and the caller sends it again (duplicates dropped by event id).
      if (handed === 0) throw error;
      batch.handedOnly(handed, count);
      await this.awaitReports(client, batch).catch(() => undefined);
      throw error;
    }
    await this.awaitReports(client, batch);
  }

  async disconnect(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    this.connected = undefined;
    if (client?.isConnected()) await new Promise<void>((resolve) => client.disconnect(() => resolve()));
  }

  /** Flushes until every report of the batch is in (flush runs off the event loop, in a worker). */
  private async awaitReports(client: RdkafkaProducer, batch: PendingBatch): Promise<void> {
    const settled = batch.settled.then(
      () => ({ ok: true as const }),
      (error: unknown) => ({ ok: false as const, error }),
    );
    while (!batch.done) {
      await new Promise<void>((resolve) => client.flush(FLUSH_SLICE_MS, () => resolve()));
      // Reports reach JavaScript through node-rdkafka's dispatcher, just after the flush returns.
      if (!batch.done) await Promise.race([settled, new Promise((r) => setTimeout(r, 5))]);
    }
    const outcome = await settled;
    if (this.fatal !== undefined) {
      // A dead idempotent producer is replaced: the next batch starts a new producer id and epoch.
      const reason = this.fatal;
      this.fatal = undefined;
      await this.disconnect().catch(() => undefined);
      throw new Error(`librdkafka producer failed fatally: ${reason}`);
    }
    if (!outcome.ok) throw outcome.error;
  }

  private connection(): Promise<RdkafkaProducer> {
    this.connected ??= this.open().catch((error: unknown) => {
      this.connected = undefined;
      throw error;
    });
    return this.connected;
  }

  private open(): Promise<RdkafkaProducer> {
    const client = new this.native.Producer(
      {
        'client.id': this.options.clientId,
        'metadata.broker.list': this.options.brokers.join(','),
        'enable.idempotence': true,
        'max.in.flight.requests.per.connection': 5,
        'linger.ms': this.options.lingerMs ?? 50,
        'compression.codec': this.options.compression === 'gzip' ? 'gzip' : 'none',
        // Topics are provisioned explicitly: a misspelt topic must fail, not appear (as with kafkajs).
        'allow.auto.create.topics': false,
        dr_cb: true,
      },
      // Topic-level settings: node-rdkafka hands the first object to librdkafka's global conf only.
      {
        acks: -1,
        'message.timeout.ms': this.options.messageTimeoutMs ?? 30_000,
        // Java's murmur2 (what kafkajs's default partitioner computes) for keyed records; the
        // default, consistent_random, is CRC32 and would put a tenant on another partition.
        partitioner: 'murmur2_random',
      },
    );
    client.on('delivery-report', (error, report) => {
      const batch = report.opaque;
      if (batch instanceof PendingBatch) batch.report(error, report);
    });
    client.on('event.error', (error) => {
      if (error.code === ERR_FATAL || error.isFatal) this.fatal = error.message;
    });
    return new Promise((resolve, reject) => {
      client.connect({ timeout: 10_000 }, (error) => {
        if (error) reject(new Error(`librdkafka producer could not connect: ${error.message}`));
        else {
          this.client = client;
          resolve(client);
        }
      });
    });
  }
}

function toBuffer(value: Buffer | string): Buffer {
  return typeof value === 'string' ? Buffer.from(value) : value;
}

function toHeaders(headers: LedgerMessage['headers']): Record<string, string>[] | undefined {
  return headers ? Object.entries(headers).map(([k, v]) => ({ [k]: v })) : undefined;
}
