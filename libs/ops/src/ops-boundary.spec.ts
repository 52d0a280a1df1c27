import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * The projections' Redis layout has one owner (@tally/projections: `ProjectionNamespaces`,
 * `NamespaceReader`, `ProjectionStore`). This lib once built those keys itself and re-implemented
 * namespace handling; a name or literal of the layout appearing here again means it does again.
 */
const FORBIDDEN = [
  'ProjectionKeys',
  'ACTIVE_NAMESPACE_KEY',
  'NAMESPACES_KEY',
  'decodeKeyPart',
  'encodeKeyPart',
  'offsetField',
  'tally:proj',
  "'tally-projector'",
];

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sources(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('ops-boundary.spec.ts') ? [path] : [];
  });
}

describe('libs/ops boundary', () => {
  it('never builds a projection key nor names the projector group itself', () => {
    // given every source file of the lib
    const files = sources(__dirname);
    expect(files.length).toBeGreaterThan(10);
    // then none mentions the projections' key layout
    const offending = files.flatMap((file) => {
      const text = readFileSync(file, 'utf8');
      return FORBIDDEN.filter((name) => text.includes(name)).map((name) => `${file}: ${name}`);
    });
    expect(offending).toEqual([]);
  });
});
