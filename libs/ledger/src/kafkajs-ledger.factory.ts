import { KafkajsAdminAdapter } from './kafkajs-admin.adapter';
import { KafkajsAdminConnection } from './kafkajs-admin.connection';
import { createKafka, KafkaClientOptions } from './kafkajs-client.factory';
import { KafkajsConsumerFactory } from './kafkajs-consumer.factory';
import { KafkajsLedgerProducer } from './kafkajs-ledger.producer';
import { KafkajsTopicProvisioner } from './kafkajs-topic.provisioner';
import type { Ledger } from './ledger.port';

/** Builds the ports on kafkajs. Nothing connects until first use. */
export function createLedger(options: KafkaClientOptions): Ledger {
  const kafka = createKafka(options);
  const connection = new KafkajsAdminConnection(kafka);
  const producer = new KafkajsLedgerProducer(kafka);
  const consumers = new KafkajsConsumerFactory(kafka);
  return {
    producer,
    consumers,
    provisioner: new KafkajsTopicProvisioner(connection),
    admin: new KafkajsAdminAdapter(connection),
    async close() {
      // Consumers first: leaving the group promptly lets other members take the partitions.
      await consumers.disconnectAll();
      await Promise.allSettled([producer.disconnect(), connection.disconnect()]);
    },
  };
}
