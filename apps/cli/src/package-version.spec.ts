import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { packageVersion } from './package-version';

describe(packageVersion.name, () => {
  let dir: string | undefined;
  afterEach(() => {
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });

  it('reads the nearest package.json above, as from dist/apps/cli/src', () => {
    dir = mkdtempSync(join(tmpdir(), 'tally-version-'));
    const deep = join(dir, 'dist/apps/cli/src');
    mkdirSync(deep, { recursive: true });
    writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'tally', version: '9.8.7' }));

    expect(packageVersion(deep)).toBe('9.8.7');
  });
});
