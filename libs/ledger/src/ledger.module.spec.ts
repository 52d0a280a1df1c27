import { Test } from '@nestjs/testing';
import { describe, expect, it } from 'vitest';
import {
  KAFKA_ADMIN,
  LEDGER,
  LEDGER_CONSUMER_FACTORY,
  LEDGER_PRODUCER,
  TOPIC_PROVISIONER,
} from './ledger.constants';
import { LedgerModule } from './ledger.module';
import type { Ledger } from './ledger.port';

describe(LedgerModule.name, () => {
  it('provides every port of one ledger without connecting (the ports connect on first use)', async () => {
    // given: a broker address where nothing listens, so any eager connection would fail the test
    const sut = await Test.createTestingModule({
      imports: [LedgerModule.forRoot({ brokers: ['127.0.0.1:1'], clientId: 'spec', logLevel: 'nothing' })],
    }).compile();
    await sut.init();

    const ledger = sut.get<Ledger>(LEDGER);
    expect(sut.get(LEDGER_PRODUCER)).toBe(ledger.producer);
    expect(sut.get(LEDGER_CONSUMER_FACTORY)).toBe(ledger.consumers);
    expect(sut.get(TOPIC_PROVISIONER)).toBe(ledger.provisioner);
    expect(sut.get(KAFKA_ADMIN)).toBe(ledger.admin);
    await sut.close();
  });
});
