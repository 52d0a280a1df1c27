import { describe, expect, it } from 'vitest';
import { PartitionReceipts } from './partition-receipts';

describe(PartitionReceipts.name, () => {
  it('finds nothing missing when every partition written to was acknowledged', () => {
    const sut = new PartitionReceipts();
    sut.record('usage', 0);
    sut.record('usage', 2);
    sut.record('usage', 2);
    sut.record('decision', 1);

    expect(
      sut.missing([
        { topicName: 'usage', partition: 0 },
        { topicName: 'usage', partition: 2 },
        { topicName: 'decision', partition: 1 },
        { topicName: 'decision', partition: 5 },
      ]),
    ).toEqual([]);
  });

  it('names the partitions no broker acknowledged (a retry that skipped a moved leader)', () => {
    // given a batch for partitions 0, 1, 4 whose partition 4 moved to the broker that had answered for 1
    const sut = new PartitionReceipts();
    for (const p of [0, 1, 4]) sut.record('usage', p);
    sut.record('decision', 4);

    // when the answers only cover what each broker led at the first attempt
    const missing = sut.missing([
      { topicName: 'usage', partition: 0 },
      { topicName: 'usage', partition: 1 },
    ]);

    // then
    expect(missing).toEqual(['decision/4', 'usage/4']);
  });
});
