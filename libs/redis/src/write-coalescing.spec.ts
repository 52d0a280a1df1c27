import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { coalesceWrites, TurnCork, type Corkable } from './write-coalescing';

/** A stream that records cork/uncork; its `depth` is Node's `writableCorked`. */
class FakeStream implements Corkable {
  depth = 0;
  readonly log: string[] = [];
  constructor(private readonly name: string) {}
  cork(): void {
    this.depth++;
    this.log.push(`cork ${this.name}`);
  }
  uncork(): void {
    this.depth--;
    this.log.push(`uncork ${this.name}`);
  }
}

/** Turn ends run only when the test says the turn is over. */
function manualTurns(): { turnEnd: (f: () => void) => void; endTurn: () => void; pending: () => number } {
  const queue: (() => void)[] = [];
  return {
    turnEnd: (f) => queue.push(f),
    endTurn: () => queue.splice(0).forEach((f) => f()),
    pending: () => queue.length,
  };
}

describe(TurnCork.name, () => {
  it('corks at the first write of a turn, once, and uncorks at its end', () => {
    const turns = manualTurns();
    const sut = new TurnCork(turns.turnEnd);
    const stream = new FakeStream('a');

    for (let i = 0; i < 100; i++) sut.beforeWrite(stream);

    expect(stream.depth).toBe(1);
    expect(turns.pending()).toBe(1);
    turns.endTurn();
    expect(stream.depth).toBe(0);
    expect(stream.log).toEqual(['cork a', 'uncork a']);
  });

  it('starts afresh in the next turn', () => {
    const turns = manualTurns();
    const sut = new TurnCork(turns.turnEnd);
    const stream = new FakeStream('a');

    sut.beforeWrite(stream);
    turns.endTurn();
    sut.beforeWrite(stream);
    sut.beforeWrite(stream);

    expect(stream.depth).toBe(1);
    expect(turns.pending()).toBe(1);
    turns.endTurn();
    expect(stream.log).toEqual(['cork a', 'uncork a', 'cork a', 'uncork a']);
  });

  it('given a new socket within the turn (a reconnect), flushes the old one at once and corks the new one', () => {
    const turns = manualTurns();
    const sut = new TurnCork(turns.turnEnd);
    const [old, fresh] = [new FakeStream('old'), new FakeStream('new')];

    sut.beforeWrite(old);
    sut.beforeWrite(fresh);

    expect(old.depth).toBe(0);
    expect(fresh.depth).toBe(1);
    expect(turns.pending()).toBe(1);
    turns.endTurn();
    expect([old.log, fresh.log]).toEqual([
      ['cork old', 'uncork old'],
      ['cork new', 'uncork new'],
    ]);
  });

  it('does nothing without a socket (a client that never connected)', () => {
    const turns = manualTurns();
    const sut = new TurnCork(turns.turnEnd);

    sut.beforeWrite(undefined);

    expect(turns.pending()).toBe(0);
  });
});

describe(coalesceWrites.name, () => {
  // Never connected: sendCommand rejects at once (no offline queue), so only the hook is exercised.
  const redis = new Redis({ lazyConnect: true, enableOfflineQueue: false });
  afterAll(() => redis.disconnect());

  it('installs once per connection, so a second call does not cork twice', () => {
    const turns = manualTurns();
    coalesceWrites(redis, turns.turnEnd);
    const installed = redis.sendCommand;
    coalesceWrites(redis, turns.turnEnd);

    expect(redis.sendCommand).toBe(installed);
    expect(Object.hasOwn(redis, 'sendCommand')).toBe(true);
  });
});
