import { describe, expect, it } from 'vitest';
import { BatchQueue } from './batch-queue';

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe(BatchQueue.name, () => {
  it('hands items over in arrival order', async () => {
    const sut = new BatchQueue<string>(100);
    await sut.push('a', 10);
    await sut.push('b', 10);
    expect([await sut.take(), await sut.take()]).toEqual(['a', 'b']);
    expect(sut.records).toBe(0);
  });

  it('holds a push while the queue holds maxRecords, and takes it once an item leaves', async () => {
    const sut = new BatchQueue<string>(20);
    await sut.push('a', 15);
    await sut.push('b', 10); // 15 < 20: taken
    let third = false;
    const pushing = sut.push('c', 1).then(() => (third = true));
    await tick();
    expect(third).toBe(false);
    expect(await sut.take()).toBe('a');
    await pushing;
    expect(third).toBe(true);
    expect(sut.records).toBe(11);
  });

  it('always takes a batch into an empty queue, however large', async () => {
    const sut = new BatchQueue<string>(5);
    await sut.push('huge', 1000);
    expect(sut.records).toBe(1000);
  });

  it('wakes a waiting take when an item arrives, and ends it with undefined once closed', async () => {
    const sut = new BatchQueue<string>(5);
    const first = sut.take();
    await sut.push('a', 1);
    expect(await first).toBe('a');
    const second = sut.take();
    sut.close();
    expect(await second).toBeUndefined();
    await expect(sut.push('late', 1)).rejects.toThrow('batch queue closed');
  });

  it('drains what is queued after close before ending', async () => {
    const sut = new BatchQueue<string>(5);
    await sut.push('a', 1);
    sut.close();
    expect(await sut.take()).toBe('a');
    expect(await sut.take()).toBeUndefined();
  });

  it('clears the waiting items and releases held pushes', async () => {
    const sut = new BatchQueue<string>(1);
    await sut.push('a', 1);
    const held = sut.push('b', 1);
    expect(sut.clear()).toBe(1);
    await held;
    expect(sut.length).toBe(1);
    expect(await sut.take()).toBe('b');
  });
});
