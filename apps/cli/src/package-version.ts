import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

/**
 * `tally --version`: the version of the nearest `package.json` above this file, which is the
 * repository's both from the sources (apps/cli/src) and from the build (dist/apps/cli/src), so the
 * version is written in one place only.
 */
export function packageVersion(from: string = __dirname): string {
  for (let dir = from; ; dir = dirname(dir)) {
    let text: string | undefined;
    try {
      text = readFileSync(join(dir, 'package.json'), 'utf8');
    } catch {
      // No package.json here: look one folder up.
    }
    if (text !== undefined) return String((JSON.parse(text) as { version?: unknown }).version);
    if (dirname(dir) === dir) throw new Error(`no package.json above ${from}`);
  }
}
