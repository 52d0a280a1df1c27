// npm run build:client: compile the `@tally/client` package (libs/client) on its own, with .d.ts,
// into libs/client/dist, the folder its package.json publishes. Its tsconfig clears the repo's
// `@tally/*` paths, so an import of a server lib fails here instead of shipping a broken package.
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
console.log('build:client: libs/client/dist ready');
