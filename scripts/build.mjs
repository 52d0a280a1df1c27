// npm run build: compile every app and lib with tsc, rewrite @tally/* imports to relative paths,
// and copy the non-TypeScript assets (Lua scripts, protos) beside the compiled code; build the console.
import { execFileSync } from 'node:child_process';
import { chmodSync, cpSync, readdirSync, rmSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
const bin = (name) => join(root, 'node_modules', '.bin', name);
rmSync(join(root, 'dist'), { recursive: true, force: true });
execFileSync(bin('tsc'), ['-p', 'tsconfig.build.json'], { cwd: root, stdio: 'inherit' });
execFileSync(bin('tsc-alias'), ['-p', 'tsconfig.build.json'], { cwd: root, stdio: 'inherit' });

const assets = /\.(lua|proto|yaml)$/;
function copyAssets(dir) {
  for (const entry of readdirSync(dir)) {
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) copyAssets(path);
    else if (assets.test(entry)) cpSync(path, join(root, 'dist', relative(root, path)));
  }
}
for (const top of ['apps', 'libs']) copyAssets(join(root, top));
// The operator console into dist/console, which the projector serves at /console.
execFileSync(process.execPath, [join(root, 'scripts', 'build-console.mjs'), join(root, 'dist/console')], {
  cwd: root,
  stdio: 'inherit',
});
// The `bin` of package.json: executable, so `npm link` / `npx tally` / `./dist/apps/cli/src/main.js` run it.
chmodSync(join(root, 'dist/apps/cli/src/main.js'), 0o755);
// The client package builds apart: its own dist, declarations, no server lib on its path.
execFileSync(process.execPath, [join(root, 'scripts', 'build-client.mjs')], { cwd: root, stdio: 'inherit' });
console.log('build: dist/ ready');
