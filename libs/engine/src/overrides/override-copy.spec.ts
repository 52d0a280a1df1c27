import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { decodeHeld, OverrideCopy } from './override-copy';

const NOW = 1_700_000_000_000;
const meta = '\n{"reason":"r","set_by":"ops","updated_at":1}';
const limit = (version: number, n: number, expires = '') => `${version};${expires};hourly=${n}${meta}`;
const block = (version: number) => `${version};;hourly=0,daily=50${meta}`;

/** The heap after a full collection: `--expose-gc` turned on for this process, then `gc` fetched. */
function heapAfterGc(): number {
  setFlagsFromString('--expose-gc');
  (runInNewContext('gc') as () => void)();
  return process.memoryUsage().heapUsed;
}

/** Reads `fields` into `shard` of `sut` at `version`, as one refresh does. */
function load(sut: OverrideCopy, shard: number, version: number, fields: [string, string][]): void {
  const builder = sut.begin(shard, version, NOW);
  for (const [field, value] of fields) builder.add(field, value);
  builder.commit();
}

describe(OverrideCopy.name, () => {
  it('holds what a shard read says, at its version; a new read replaces the shard whole', () => {
    const sut = new OverrideCopy(10);
    load(sut, 3, 7, [
      ['p:acme:a', limit(5, 20)],
      ['p:acme:b', block(7)],
      ['p:acme:gone', limit(2, 1, String(NOW))],
    ]);

    expect(sut.versionOf(3)).toBe(7);
    expect(sut.versionOf(4)).toBeUndefined();
    expect(sut.lookup(3, 'p:acme:a', NOW)).toEqual({ version: 5, expiresAtMs: null, limits: { hourly: 20 } });
    expect(sut.lookup(3, 'p:acme:b', NOW)).toEqual({ version: 7, expiresAtMs: null, limits: null });
    // expired at the read: not held
    expect(sut.lookup(3, 'p:acme:gone', NOW)).toBeUndefined();
    expect(sut.size).toBe(2);

    // when the block is removed (version 8): the next read no longer has it
    load(sut, 3, 8, [['p:acme:a', limit(5, 20)]]);
    expect(sut.lookup(3, 'p:acme:b', NOW)).toBeUndefined();
    expect(sut.size).toBe(1);
  });

  it('an override that expires while held stops applying at its expiry (this host’s clock)', () => {
    const sut = new OverrideCopy(10);
    load(sut, 0, 1, [['p:_:k', `1;${NOW + 1_000};hourly=0${meta}`]]);

    expect(sut.lookup(0, 'p:_:k', NOW + 999)?.limits).toBeNull();
    expect(sut.lookup(0, 'p:_:k', NOW + 1_000)).toBeUndefined();
  });

  it('never holds more than its bound under 10× as many overrides, blocks first, and counts the rest', () => {
    // given a bound of 1,000 and 10,000 overrides over 4 shards, one in ten a block
    const bound = 1_000;
    const sut = new OverrideCopy(bound);
    const heldBlocks = (shard: number, fields: [string, string][]) =>
      fields.filter(([f, v]) => v.includes('=0') && sut.lookup(shard, f, NOW) !== undefined).length;
    const shards: [string, string][][] = [];
    for (let s = 0; s < 4; s++) {
      const fields: [string, string][] = [];
      for (let i = 0; i < 2_500; i++)
        fields.push([`p:t${s}:k${i}`, i % 10 === 9 ? block(i + 1) : limit(i + 1, 100 + i)]);
      shards.push(fields);
      // when each shard is read in turn
      load(sut, s, 2_500, fields);
      expect(sut.size).toBeLessThanOrEqual(bound);
    }

    // then the copy is at its bound, holds every block (1,000 of them, displacing raises of earlier
    // shards), and counts what it left out
    expect(sut.size).toBe(bound);
    expect(shards.reduce((n, fields, s) => n + heldBlocks(s, fields), 0)).toBe(1_000);
    expect(sut.skipped).toEqual({ blocks: 0, limits: 9_000 });

    // when a fifth shard brings 200 more blocks: no room for them, none to displace
    load(
      sut,
      4,
      200,
      Array.from({ length: 200 }, (_, i): [string, string] => [`p:t4:k${i}`, block(i + 1)]),
    );
    expect(sut.size).toBe(bound);
    expect(sut.skipped).toEqual({ blocks: 200, limits: 9_000 });
  });

  it('keeps ≈ 0.3 KB of heap per held override (after a full collection)', () => {
    // given an empty copy and a collected heap
    const sut = new OverrideCopy(20_000);
    const before = heapAfterGc();
    // when 20,000 overrides are read into it, each value a fresh string as a Redis reply is
    const builder = sut.begin(0, 1, NOW);
    for (let i = 0; i < 20_000; i++)
      builder.add(`policy-name:tenant-${i % 100}:principal-${i}`, limit(i, 1_000 + i));
    builder.commit();
    const perEntry = (heapAfterGc() - before) / sut.size;

    // then what stays is the field, a small object and its limits (docs/operations.md sizes it)
    expect(sut.size).toBe(20_000);
    expect(perEntry).toBeLessThan(400);
  });
});

describe(decodeHeld.name, () => {
  it.each([
    ['3;;hourly=5,daily=0', { version: 3, expiresAtMs: null, limits: null }],
    ['3;99;hourly=5', { version: 3, expiresAtMs: 99, limits: { hourly: 5 } }],
    ['x;;hourly=5', null],
    ['3;;hourly=-1', null],
  ])('%j → %j', (value, expected) => {
    expect(decodeHeld(`${value}${meta}`)).toEqual(expected);
  });
});
