// The operator console (ADR 0007, charts: ADR 0010): browser modules compiled from apps/console/src,
// its static files, and uPlot (from node_modules, served as /console/uplot.js and uplot.css) into
// one flat folder the projector serves at /console. No bundler, no CDN: the one bare import
// (`uplot`) is pointed at the local copy. Usage: node scripts/build-console.mjs <outDir>
import { execFileSync } from 'node:child_process';
import { cpSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
const out = resolve(process.argv[2] ?? join(root, 'dist/console'));
execFileSync(
  join(root, 'node_modules/.bin/tsc'),
  ['-p', 'apps/console/tsconfig.build.json', '--outDir', out],
  {
    cwd: root,
    stdio: 'inherit',
  },
);
cpSync(join(root, 'apps/console/static'), out, { recursive: true });
cpSync(join(root, 'node_modules/uplot/dist/uPlot.esm.js'), join(out, 'uplot.js'));
cpSync(join(root, 'node_modules/uplot/dist/uPlot.min.css'), join(out, 'uplot.css'));
for (const name of readdirSync(out).filter((n) => n.endsWith('.js') && n !== 'uplot.js')) {
  const path = join(out, name);
  writeFileSync(path, readFileSync(path, 'utf8').replace(/from 'uplot';/g, "from './uplot.js';"));
}
