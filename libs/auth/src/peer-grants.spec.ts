import { describe, expect, it } from 'vitest';
import { PeerGrants } from './peer-grants';
import { TokenGrant } from './token-grant';
import { TokenSet } from './token-set';

const GRANT = new TokenGrant('caller', new Set(['decide']));
const OTHER = new TokenGrant('other', new Set(['decide']));

describe(PeerGrants.name, () => {
  const set = new TokenSet('v1', []);

  it('recalls the grant of the exact header a peer had accepted, under the same set', () => {
    const sut = new PeerGrants();
    sut.remember('10.0.0.1:1000', 'Bearer abc', set, GRANT);

    expect(sut.recall('10.0.0.1:1000', 'Bearer abc', set)).toBe(GRANT);
    expect(sut.recall('10.0.0.1:1000', 'Bearer abd', set)).toBeUndefined();
    expect(sut.recall('10.0.0.1:1000', 'Bearer ab', set)).toBeUndefined();
    expect(sut.recall('10.0.0.1:1000', 'Bearer abc ', set)).toBeUndefined();
    expect(sut.recall('10.0.0.1:1001', 'Bearer abc', set)).toBeUndefined();
  });

  it('keeps one header per peer: the last accepted', () => {
    const sut = new PeerGrants();
    sut.remember('p', 'Bearer abc', set, GRANT);
    sut.remember('p', 'Bearer xyz', set, OTHER);

    expect(sut.recall('p', 'Bearer abc', set)).toBeUndefined();
    expect(sut.recall('p', 'Bearer xyz', set)).toBe(OTHER);
    expect(sut.size).toBe(1);
  });

  it('forgets everything when another token set is in force (a reload), raw headers included', () => {
    const sut = new PeerGrants();
    sut.remember('p', 'Bearer abc', set, GRANT);
    sut.remember('q', 'Bearer abc', set, GRANT);
    const reloaded = new TokenSet('v2', []);

    expect(sut.recall('p', 'Bearer abc', reloaded)).toBeUndefined();
    expect(sut.size).toBe(0);
    // and the old set is not trusted again either
    expect(sut.recall('q', 'Bearer abc', set)).toBeUndefined();
  });

  it('stays bounded: the peer accepted longest ago is forgotten first', () => {
    const sut = new PeerGrants(3);
    for (const peer of ['a', 'b', 'c']) sut.remember(peer, 'Bearer abc', set, GRANT);
    // `a` accepted again: now the most recent
    sut.remember('a', 'Bearer abc', set, GRANT);

    sut.remember('d', 'Bearer abc', set, GRANT);

    expect(sut.size).toBe(3);
    expect(sut.recall('b', 'Bearer abc', set)).toBeUndefined();
    for (const peer of ['a', 'c', 'd']) expect(sut.recall(peer, 'Bearer abc', set)).toBe(GRANT);
  });
});
