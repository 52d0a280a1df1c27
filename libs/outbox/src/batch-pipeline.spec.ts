import { describe, expect, it } from 'vitest';
import { BatchPipeline } from './batch-pipeline';

/** A step that resolves when the test says so, and logs when it starts and ends. */
function step(log: string[], name: string) {
  let finish: (ok: boolean) => void = () => undefined;
  const run = (): Promise<boolean> => {
    log.push(`${name} start`);
    return new Promise<boolean>((resolve) => {
      finish = (ok) => {
        log.push(`${name} end`);
        resolve(ok);
      };
    });
  };
  return { run, finish: (ok = true) => finish(ok) };
}

const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe(BatchPipeline.name, () => {
  it("produces batch 2 while batch 1 is acknowledged, and acknowledges 2 only after 1's ack", async () => {
    // given: two batches
    const log: string[] = [];
    const sut = new BatchPipeline();
    const [p1, a1, p2, a2] = ['produce 1', 'ack 1', 'produce 2', 'ack 2'].map((n) => step(log, n));

    // when: batch 1 is submitted, its produce confirmed; batch 2 submitted; then 2's produce is
    // confirmed before 1's ack ends
    await sut.submit(p1.run, a1.run);
    p1.finish();
    await sut.submit(p2.run, a2.run);
    await tick();
    p2.finish();
    await tick();
    const before = [...log];
    a1.finish();
    await tick();
    a2.finish();

    // then: produce 2 overlapped ack 1; ack 2 waited for ack 1
    expect(await sut.settle()).toBe(true);
    expect(before).toEqual([
      'produce 1 start',
      'produce 1 end',
      'ack 1 start',
      'produce 2 start',
      'produce 2 end',
    ]);
    expect(log.slice(before.length)).toEqual(['ack 1 end', 'ack 2 start', 'ack 2 end']);
  });

  it('never has two produces in flight: submit waits for the previous produce', async () => {
    const log: string[] = [];
    const sut = new BatchPipeline();
    const [p1, a1, p2, a2] = ['produce 1', 'ack 1', 'produce 2', 'ack 2'].map((n) => step(log, n));
    await sut.submit(p1.run, a1.run);
    const second = sut.submit(p2.run, a2.run);
    await tick();
    expect(log).toEqual(['produce 1 start']);
    p1.finish();
    await second;
    expect(log).toEqual(['produce 1 start', 'produce 1 end', 'ack 1 start', 'produce 2 start']);
    a1.finish();
    p2.finish();
    await tick();
    a2.finish();
    expect(await sut.settle()).toBe(true);
  });

  it('an abandoned produce acknowledges nothing and refuses the next batch', async () => {
    const log: string[] = [];
    const sut = new BatchPipeline();
    const [p1, a1, p2, a2] = ['produce 1', 'ack 1', 'produce 2', 'ack 2'].map((n) => step(log, n));
    await sut.submit(p1.run, a1.run);
    p1.finish(false);
    expect(await sut.submit(p2.run, a2.run)).toBe(false);
    expect(await sut.settle()).toBe(false);
    expect(log).toEqual(['produce 1 start', 'produce 1 end']);
  });
});
