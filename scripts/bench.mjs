// npm run bench: build the tree, then run the hot-path benchmark against the built apps
// (test/bench/hot-path.bench.mjs; settings are listed there). `--no-build` reuses dist/ as it is.
import { execFileSync } from 'node:child_process';

const major = Number(process.versions.node.split('.')[0]);
if (major < 22) {
  process.stderr.write(`bench: Node ${process.version} is too old; run: source scripts/node-env.sh\n`);
  process.exit(2);
}
const root = new URL('..', import.meta.url).pathname;
if (!process.argv.includes('--no-build')) {
  execFileSync(process.execPath, ['scripts/build.mjs'], { cwd: root, stdio: 'inherit' });
}
const { runHotPathBench } = await import('../test/bench/hot-path.bench.mjs');
try {
  await runHotPathBench();
  process.exit(0);
} catch (error) {
  process.stderr.write(`bench: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
}
