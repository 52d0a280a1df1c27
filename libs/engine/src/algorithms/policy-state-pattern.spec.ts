import { shardOf } from '../store/keys';
import { describe, expect, it } from 'vitest';
import { policyStateKeyPattern } from './policy-state-pattern';

describe(policyStateKeyPattern.name, () => {
  it('matches every shard, or the one tenant with glob characters escaped', () => {
    expect(policyStateKeyPattern('p')).toBe('tally:v1:{s*}:pk:p:*');
    const shard = shardOf('a*b', 64);
    expect(policyStateKeyPattern('p', { name: 'a*b', shards: 64 })).toBe(`tally:v1:{s${shard}}:pk:p:a\\*b:*`);
  });
});
