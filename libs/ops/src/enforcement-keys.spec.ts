import { shardOf } from '@tally/engine';
import { describe, expect, it } from 'vitest';
import { windowKeyPattern } from './enforcement-keys';

describe(windowKeyPattern.name, () => {
  it('matches every shard, or the one tenant with glob characters escaped', () => {
    expect(windowKeyPattern('p', 'hourly')).toBe('tally:v1:{s*}:w:p:hourly:*');
    const shard = shardOf('a*b', 64);
    expect(windowKeyPattern('p', 'hourly', { name: 'a*b', shards: 64 })).toBe(
      `tally:v1:{s${shard}}:w:p:hourly:a\\*b:*`,
    );
  });
});
