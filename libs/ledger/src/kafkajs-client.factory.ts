import { Kafka, logLevel as KafkajsLevel, LogEntry } from 'kafkajs';
import { fixKafkajsCrc } from './kafkajs-crc.fix';
import { fixKafkajsIdleTimer } from './kafkajs-idle-timer.fix';
import { fixKafkajsProduceRequest } from './kafkajs-produce.fix';
import { fixKafkajsRecordEncoder } from './kafkajs-record.fix';
import { jsonLineLogSink, LedgerLogEntry, LedgerLogLevel, LedgerLogSink } from './ledger-log';

export interface KafkaClientOptions {
  readonly brokers: readonly string[];
  readonly clientId: string;
  /** Default `warn`: the client is chatty at info (every join, every connection). */
  readonly logLevel?: LedgerLogLevel;
  readonly logSink?: LedgerLogSink;
}

const TO_KAFKAJS: Record<LedgerLogLevel, KafkajsLevel> = {
  nothing: KafkajsLevel.NOTHING,
  error: KafkajsLevel.ERROR,
  warn: KafkajsLevel.WARN,
  info: KafkajsLevel.INFO,
  debug: KafkajsLevel.DEBUG,
};

function fromKafkajs(level: KafkajsLevel): LedgerLogEntry['level'] {
  if (level <= KafkajsLevel.ERROR) return 'error';
  if (level === KafkajsLevel.WARN) return 'warn';
  if (level === KafkajsLevel.INFO) return 'info';
  return 'debug';
}

/**
 * The one place a kafkajs client is built; its logs go to the structured sink, not to console, and
 * its connections no longer spin a 1 ms timer while idle (kafkajs-idle-timer.fix.ts), it encodes
 * each record into one buffer (kafkajs-record.fix.ts) and checksums a record batch eight bytes at a
 * time (kafkajs-crc.fix.ts), and writes a produce request into one buffer (kafkajs-produce.fix.ts).
 */
export function createKafka(options: KafkaClientOptions): Kafka {
  fixKafkajsIdleTimer();
  fixKafkajsRecordEncoder();
  fixKafkajsCrc();
  fixKafkajsProduceRequest();
  const sink = options.logSink ?? jsonLineLogSink;
  return new Kafka({
    clientId: options.clientId,
    brokers: [...options.brokers],
    logLevel: TO_KAFKAJS[options.logLevel ?? 'warn'],
    logCreator: () => (entry: LogEntry) => {
      const {
        timestamp,
        message,
        logger: _logger,
        ...fields
      } = entry.log as LogEntry['log'] & { logger?: unknown };
      sink({ time: timestamp, level: fromKafkajs(entry.level), component: entry.namespace, message, fields });
    },
  });
}
