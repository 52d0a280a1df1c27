import { describe, expect, it } from 'vitest';
import { originOf } from './dead-letters';

describe('originOf', () => {
  it("is the projector's source record (topic, partition, offset), not the dead letter's own place", () => {
    const headers = {
      'tally-dlq-source': 'projector',
      'tally-dlq-topic': 'tally.usage.v1',
      'tally-dlq-partition': '2',
      'tally-dlq-offset': '41',
    };
    expect(originOf(headers, Buffer.from('{"not":"an event"}'))).toBe('tally.usage.v1/2 @41');
  });

  it("is the relay's outbox stream and entry, or the denial hash's shard and field, from its JSON value", () => {
    const outbox = { source: 'tally-relay', stream: 'tally:v1:{s3}:outbox', id: '1-0', reason: 'x' };
    expect(originOf({ 'tally-dlq-source': 'outbox' }, Buffer.from(JSON.stringify(outbox)))).toBe(
      'outbox tally:v1:{s3}:outbox entry 1-0',
    );
    const denial = { source: 'tally-relay', shard: 3, field: 'p|k', reason: 'x' };
    expect(originOf({ 'tally-dlq-source': 'denials' }, Buffer.from(JSON.stringify(denial)))).toBe(
      'denials shard 3 field p|k',
    );
  });

  it('is null when the record says nothing readable about it', () => {
    expect(originOf({}, Buffer.from('not json'))).toBeNull();
    expect(originOf({}, null)).toBeNull();
  });
});
