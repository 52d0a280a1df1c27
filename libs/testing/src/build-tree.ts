import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { cp, readdir, stat } from 'node:fs/promises';
import { join, relative, resolve } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
/** The repository root: this file is libs/testing/src/build-tree.ts. */
const ROOT = resolve(__dirname, '../../..');
const ASSETS = /\.(lua|proto|yaml)$/;

/**
 * The whole tree compiled into `out` as scripts/build.mjs builds dist/ (tsc, tsc-alias, then the Lua,
 * proto and YAML assets of apps/ and libs/, and the operator console into `out/console`), for suites that run built apps as child processes: a
 * private folder never races another engineer's `npm run build`. Fails unless every app named in
 * `apps` (e.g. `relay`) has its `apps/<app>/src/main.js`.
 */
export async function buildTree(out: string, apps: readonly string[]): Promise<void> {
  const bin = (name: string): string => join(ROOT, 'node_modules', '.bin', name);
  // Type errors elsewhere in a tree under construction still emit JavaScript; the check below decides.
  await run(bin('tsc'), ['-p', 'tsconfig.build.json', '--outDir', out], { cwd: ROOT }).catch(() => undefined);
  await run(bin('tsc-alias'), ['-p', 'tsconfig.build.json', '--outDir', out], { cwd: ROOT });
  const copyAssets = async (from: string): Promise<void> => {
    for (const entry of await readdir(from)) {
      const path = join(from, entry);
      if ((await stat(path)).isDirectory()) await copyAssets(path);
      else if (ASSETS.test(entry)) await cp(path, join(out, relative(ROOT, path)));
    }
  };
  await copyAssets(join(ROOT, 'apps'));
  await copyAssets(join(ROOT, 'libs'));
  // The operator console, as scripts/build.mjs builds it: beside the apps, where the projector looks.
  const consoleOut = join(out, 'console');
  await run(process.execPath, [join(ROOT, 'scripts/build-console.mjs'), consoleOut], { cwd: ROOT });
  for (const app of apps) {
    if (!existsSync(join(out, `apps/${app}/src/main.js`))) throw new Error(`the build produced no ${app}`);
  }
}
