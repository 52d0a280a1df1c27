/**
 * The part of node-rdkafka's API that {@link RdkafkaLedgerProducer} uses, typed here because the
 * package is not a dependency of the tree (scripts/rdkafka-install.sh builds it into .local/rdkafka).
 */
export interface RdkafkaError {
  readonly message: string;
  readonly code: number;
  readonly isFatal?: boolean;
}

export interface RdkafkaDeliveryReport {
  readonly topic: string;
  readonly partition: number;
  readonly offset: number;
  readonly key?: Buffer | string | null;
  /** What produce() was given as its opaque: the sendBatch the record belongs to. */
  readonly opaque?: unknown;
}

export interface RdkafkaProducer {
  connect(options: { timeout?: number }, callback: (error: RdkafkaError | null) => void): void;
  produce(
    topic: string,
    partition: number,
    value: Buffer,
    key: string,
    timestamp: null,
    opaque: unknown,
    headers?: Record<string, string>[],
  ): unknown;
  flush(timeoutMs: number, callback: (error: RdkafkaError | null) => void): void;
  disconnect(callback: () => void): void;
  isConnected(): boolean;
  on(
    event: 'delivery-report',
    listener: (error: RdkafkaError | null, report: RdkafkaDeliveryReport) => void,
  ): void;
  on(event: 'event.error', listener: (error: RdkafkaError) => void): void;
}

export interface RdkafkaNative {
  readonly Producer: new (
    conf: Record<string, string | number | boolean>,
    topicConf: Record<string, string | number | boolean>,
  ) => RdkafkaProducer;
  readonly librdkafkaVersion: string;
}
