// The relay of the built tree (dist/, or BENCH_DIST) with its ledger producer swapped for the
// librdkafka one (RdkafkaLedgerProducer over node-rdkafka from .local/rdkafka, built by
// scripts/rdkafka-install.sh): the same RelayModule, settings and process shape as
// `node dist/apps/relay/src/main.js`, for the client comparison benches only.
// Env: what the relay reads, plus BENCH_RDKAFKA_LINGER_MS (librdkafka's linger.ms, default 50).
import 'reflect-metadata';
import { loadBuilt } from './built.mjs';
import { loadRdkafka } from './rdkafka.mjs';

const { runHttpApp } = loadBuilt('libs/http/src/index.js');
const { RelayModule } = loadBuilt('apps/relay/src/relay.module.js');
const { LedgerModule, LEDGER_PRODUCER, RdkafkaLedgerProducer } = loadBuilt('libs/ledger/src/index.js');

/** RelayModule.forRoot(config) with LedgerModule's LEDGER_PRODUCER provider replaced, nothing else. */
function withRdkafkaProducer(module, config) {
  const native = loadRdkafka();
  const ledger = module.imports.find((m) => m.module === LedgerModule);
  if (!ledger) throw new Error('RelayModule no longer imports LedgerModule.forRoot: update this entry');
  const producer = new RdkafkaLedgerProducer(native, {
    brokers: config.kafkaBrokers,
    clientId: 'tally-relay',
    compression: config.relayCompression,
    lingerMs: Number(process.env.BENCH_RDKAFKA_LINGER_MS ?? 50),
  });
  // Nest calls this on shutdown like on any provider instance: queued records are flushed first.
  producer.onApplicationShutdown = () => producer.disconnect();
  ledger.providers = ledger.providers.map((p) =>
    p.provide === LEDGER_PRODUCER ? { provide: LEDGER_PRODUCER, useValue: producer } : p,
  );
  return module;
}

void runHttpApp({
  name: 'relay',
  port: (c) => c.relayPort,
  module: (c) => withRdkafkaProducer(RelayModule.forRoot(c), c),
});
