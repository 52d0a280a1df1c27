import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { withDotEnv } from './dot-env';

describe(withDotEnv.name, () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'tally-dotenv-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('adds the variables of .env, and the environment wins over the file', () => {
    const file = [
      '# the local stack',
      'REDIS_URL=redis://from-file:6379',
      'KAFKA_BROKERS="file:9092"',
      'TALLY_SHARDS=4 # inline comment',
      '',
    ].join('\n');
    writeFileSync(join(dir, '.env'), file);

    const sut = withDotEnv({ REDIS_URL: 'redis://from-env:6379', PATH: '/bin' }, dir);

    expect(sut).toEqual({
      REDIS_URL: 'redis://from-env:6379',
      KAFKA_BROKERS: 'file:9092',
      TALLY_SHARDS: '4',
      PATH: '/bin',
    });
  });

  it('a variable set empty in the environment still wins', () => {
    writeFileSync(join(dir, '.env'), 'TALLY_POLICIES=/etc/tally/policies.yaml\n');

    expect(withDotEnv({ TALLY_POLICIES: '' }, dir)).toEqual({ TALLY_POLICIES: '' });
  });

  it('without .env the environment is returned as it is', () => {
    const env = { REDIS_URL: 'redis://x:1' };

    expect(withDotEnv(env, dir)).toBe(env);
  });

  it.skipIf(process.getuid?.() === 0)('an unreadable .env is an error naming the file', () => {
    writeFileSync(join(dir, '.env'), 'A=1\n');
    chmodSync(join(dir, '.env'), 0o000);

    expect(() => withDotEnv({}, dir)).toThrow(`cannot read ${join(dir, '.env')}`);
  });

  it('a .env that is a folder is an error too (not silently skipped)', () => {
    const folder = join(dir, '.env');
    mkdirSync(folder);

    expect(() => withDotEnv({}, dir)).toThrow(`cannot read ${folder}`);
  });
});
