import { describe, expect, it } from 'vitest';
import { createKafka } from './kafkajs-client.factory';
import type { LedgerLogEntry } from './ledger-log';

describe(createKafka.name, () => {
  it('routes client logs to the sink as structured entries, at or above the level', () => {
    const entries: LedgerLogEntry[] = [];
    const sut = createKafka({
      brokers: ['127.0.0.1:1'],
      clientId: 't',
      logLevel: 'warn',
      logSink: (e) => entries.push(e),
    });

    sut.logger().namespace('Consumer').info('joined', { groupId: 'g' });
    sut.logger().namespace('Consumer').warn('rebalancing', { groupId: 'g' });
    sut.logger().namespace('Producer').error('failed', { retryCount: 2 });

    expect(entries.map(({ time: _t, ...e }) => e)).toEqual([
      { level: 'warn', component: 'Consumer', message: 'rebalancing', fields: { groupId: 'g' } },
      { level: 'error', component: 'Producer', message: 'failed', fields: { retryCount: 2 } },
    ]);
    expect(entries[0].time).toMatch(/^\d{4}-\d\d-\d\dT/);
  });

  it('is silent at "nothing"', () => {
    const entries: LedgerLogEntry[] = [];
    const sut = createKafka({
      brokers: ['127.0.0.1:1'],
      clientId: 't',
      logLevel: 'nothing',
      logSink: (e) => entries.push(e),
    });

    sut.logger().error('ignored');

    expect(entries).toEqual([]);
  });
});
