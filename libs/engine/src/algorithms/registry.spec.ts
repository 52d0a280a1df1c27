import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PolicyListSchema } from '@tally/api-contract';
import { ALGORITHM_RULES, ALGORITHMS, type Algorithm } from '@tally/policy';
import { describe, expect, it } from 'vitest';
import { LUA_DIR, parsePieceFile } from './decide-source';
import { ALGORITHM_REGISTRY } from './registry';

const NAMES = Object.keys(ALGORITHM_REGISTRY) as Algorithm[];

/** The literals of the control API's `algorithm` enum (api-contract cannot import the policy lib). */
function contractAlgorithms(): string[] {
  const window = PolicyListSchema.properties.policies.items.properties.windows.items;
  return (window.properties.algorithm.anyOf as { const: string }[]).map((l) => l.const);
}

describe('ALGORITHM_REGISTRY', () => {
  it("names exactly the policy file's algorithms, the policy rules' and the control contract's", () => {
    expect([...NAMES].sort()).toEqual([...ALGORITHMS].sort());
    expect(Object.keys(ALGORITHM_RULES).sort()).toEqual([...ALGORITHMS].sort());
    expect(contractAlgorithms().sort()).toEqual([...ALGORITHMS].sort());
  });

  it('gives every algorithm its own letter, and every piece sets its letter in the script', () => {
    const letters = NAMES.map((a) => ALGORITHM_REGISTRY[a].letter);
    expect(new Set(letters).size).toBe(letters.length);
    for (const a of NAMES) {
      const { lua, letter } = ALGORITHM_REGISTRY[a];
      if (lua === undefined) continue;
      const piece = readFileSync(join(LUA_DIR, 'algorithms', lua), 'utf8');
      const { pieces } = parsePieceFile(piece);
      const own = pieces.find((p) => p.letter === letter);
      expect(own, `${a}: ${lua} has -- @piece ${letter}`).toBeDefined();
      for (const section of ['read', 'eval', 'pack'] as const)
        expect(own?.[section], `${a}: its ${section} returns`).toMatch(/^return .*$/m);
      expect(piece, `${a}: ${lua} opens with its legend`).toMatch(/^--\[\[ [a-z-]+\.lua: /);
    }
  });

  it('reads back what it packs (the state codec of each hash-kept algorithm)', () => {
    const samples: Partial<Record<Algorithm, Record<string, number>>> = {
      fixed_window: { b: 28885000, c: 12 },
      calendar_month: { b: 24322, c: 7 },
      sliding_window: { b: 28885000, c: 12, p: 30 },
      token_bucket: { t: 9999999000, ts: 1796168965074 },
      gcra: { tat: 1796168965074, sub: 6 },
    };
    for (const a of NAMES) {
      const codec = ALGORITHM_REGISTRY[a].state;
      if (codec === undefined) continue;
      const state = samples[a];
      expect(state, `${a} needs a sample here`).toBeDefined();
      const back = codec.unpack(codec.pack(state!));
      expect(Object.fromEntries(Object.entries(back).map(([k, v]) => [k, Number(v)]))).toEqual(state);
    }
  });
});
