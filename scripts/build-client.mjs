// npm run build:client: compile the `@tally/client` package (libs/client) on its own, with .d.ts,
// into libs/client/dist, the folder its package.json publishes. Its tsconfig maps one `@tally/*`
// path only, the API contract its wire types come from (`import type`: nothing of it runs in the
// SDK); the contract is compiled into the package beside it (dist/api-contract) and tsc-alias
// rewrites the import to that relative path. An import of any server lib fails here instead of
// shipping a broken package.
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
