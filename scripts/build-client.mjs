// npm run build:client: compile the `@tally/client` package (libs/client) on its own, with .d.ts,
// into libs/client/dist, the folder its package.json publishes. Its tsconfig maps two `@tally/*`
// paths only: the API contract its wire types come from (`import type`: nothing of it runs in the
// SDK), and window-math, the pure maths and local limiter it shares with the engine (it runs: it
// imports nothing). Both are compiled into the package beside it (dist/api-contract,
// dist/window-math) and tsc-alias rewrites the imports to those relative paths. An import of any
// server lib fails here instead of shipping a broken package.
import { execFileSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
const pkg = join(root, 'libs', 'client');
rmSync(join(pkg, 'dist'), { recursive: true, force: true });
execFileSync(join(root, 'node_modules', '.bin', 'tsc'), ['-p', join(pkg, 'tsconfig.build.json')], {
  cwd: root,
  stdio: 'inherit',
});
execFileSync(join(root, 'node_modules', '.bin', 'tsc-alias'), ['-p', join(pkg, 'tsconfig.build.json')], {
  cwd: root,
  stdio: 'inherit',
});
console.log('build:client: libs/client/dist ready');
