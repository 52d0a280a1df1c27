import type { Consumer, EachBatchPayload, IHeaders, Kafka, KafkaMessage } from 'kafkajs';
import { nextOffset } from './lag';
import type {
  Assignment,
  BatchContext,
  BatchHandler,
  ConsumerOptions,
  LedgerBatch,
  LedgerConsumer,
  LedgerRecord,
} from './ledger-consumer.port';

export class KafkajsLedgerConsumer implements LedgerConsumer {
  readonly groupId: string;
  private readonly consumer: Consumer;
  private connected?: Promise<void>;

  constructor(
    kafka: Kafka,
    private readonly options: ConsumerOptions,
  ) {
    this.groupId = options.groupId;
    this.consumer = kafka.consumer({
      groupId: options.groupId,
      sessionTimeout: options.sessionTimeoutMs,
      heartbeatInterval: options.heartbeatIntervalMs,
      maxWaitTimeInMs: options.maxWaitTimeMs ?? 1_000,
      minBytes: options.minBytes ?? 1,
      maxBytesPerPartition: options.maxBytesPerPartition,
      maxBytes: options.maxBytes,
      allowAutoTopicCreation: false,
    });
  }

  connect(): Promise<void> {
    this.connected ??= this.consumer.connect().catch((error: unknown) => {
      this.connected = undefined;
      throw error;
    });
    return this.connected;
  }

  async run(handler: BatchHandler): Promise<void> {
    await this.connect();
    await this.consumer.subscribe({
      topics: [...this.options.topics],
      fromBeginning: this.options.fromBeginning,
    });
    await this.consumer.run({
      autoCommit: this.options.autoCommit ?? false,
      // A batch that returns normally counts as processed through its last record; a throw
      // leaves the position where it was, so the batch is fetched and handled again.
      eachBatchAutoResolve: true,
      partitionsConsumedConcurrently: this.options.partitionsConsumedConcurrently ?? 1,
      eachBatch: (payload) => handler(toBatch(payload), this.contextOf(payload)),
    });
  }

  seek(topic: string, partition: number, offset: string): void {
    this.consumer.seek({ topic, partition, offset });
  }

  async commitOffsets(
    offsets: readonly { topic: string; partition: number; offset: string }[],
  ): Promise<void> {
    await this.consumer.commitOffsets([...offsets]);
  }

  onAssigned(listener: (assignment: Assignment) => void): () => void {
    return this.consumer.on(this.consumer.events.GROUP_JOIN, (event) =>
      listener(event.payload.memberAssignment),
    );
  }

  onCrash(listener: (error: Error, restarting: boolean) => void): () => void {
    return this.consumer.on(this.consumer.events.CRASH, (event) =>
      listener(event.payload.error, event.payload.restart),
    );
  }

  async stop(): Promise<void> {
    await this.consumer.stop();
  }

  async disconnect(): Promise<void> {
    this.connected = undefined;
    await this.consumer.disconnect();
  }

  private contextOf(payload: EachBatchPayload): BatchContext {
    const { topic, partition } = payload.batch;
    return {
      heartbeat: () => payload.heartbeat(),
      isRunning: () => payload.isRunning(),
      isStale: () => payload.isStale(),
      resolveOffset: (offset) => payload.resolveOffset(offset),
      commitThrough: (offset) => this.commitOffsets([{ topic, partition, offset: nextOffset(offset) }]),
    };
  }
}

function toBatch({ batch }: EachBatchPayload): LedgerBatch {
  return {
    topic: batch.topic,
    partition: batch.partition,
    highWatermark: batch.highWatermark,
    records: batch.messages.map(toRecord),
  };
}

function toRecord(message: KafkaMessage): LedgerRecord {
  return new KafkajsRecord(message);
}

/**
 * A record as kafkajs decoded it. Key and headers are decoded when read: the projector reads
 * neither for a valid event (only a dead letter copies them), and decoding them for every record
 * showed in its profile.
 */
class KafkajsRecord implements LedgerRecord {
  readonly offset: string;
  readonly value: Buffer | null;
  readonly timestamp: string;
  private decodedHeaders?: Record<string, string>;

  constructor(private readonly message: KafkaMessage) {
    this.offset = message.offset;
    this.value = message.value;
    this.timestamp = message.timestamp;
  }

  get key(): string | null {
    return this.message.key === null ? null : this.message.key.toString('utf8');
  }

  get headers(): Record<string, string> {
    return (this.decodedHeaders ??= toHeaders(this.message.headers));
  }
}

function toHeaders(headers: IHeaders | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers ?? {})) {
    const first = Array.isArray(value) ? value[0] : value;
    if (first !== undefined) out[name] = first.toString();
  }
  return out;
}
