// The built tree (dist/, CommonJS): the benchmark measures what `npm run start:decision-api` runs.
import { createRequire } from 'node:module';
import { existsSync } from 'node:fs';
import { join } from 'node:path';

export const ROOT = new URL('../../../', import.meta.url).pathname;
/** BENCH_DIST: another build of the tree (e.g. one made outside the shared dist/ of a busy checkout). */
export const DIST = process.env.BENCH_DIST ?? join(ROOT, 'dist');
export const API_MAIN = join(DIST, 'apps/decision-api/src/main.js');
export const RELAY_MAIN = join(DIST, 'apps/relay/src/main.js');
export const PROJECTOR_MAIN = join(DIST, 'apps/projector/src/main.js');
const ENGINE_INDEX = join(DIST, 'libs/engine/src/index.js');

export function loadEngine() {
  if (!existsSync(ENGINE_INDEX)) throw new Error(`${ENGINE_INDEX} is missing: run npm run build first`);
  return createRequire(import.meta.url)(ENGINE_INDEX);
}

/** A lib of the built tree (CommonJS), by its path under dist/, e.g. `libs/events/src/index.js`. */
export function loadBuilt(path) {
  const file = join(DIST, path);
  if (!existsSync(file)) throw new Error(`${file} is missing: run npm run build first`);
  return createRequire(import.meta.url)(file);
}

/** A client with the engine's own settings (the `hot-path` profile of @tally/redis): what the API runs with. */
export function hotPathRedis(url) {
  return loadBuilt('libs/redis/src/index.js').createRedisClient({ mode: 'single', url }, 'hot-path');
}

/**
 * The source the engine loads (lua/decide.lua with what is put in at load: the layout's constants,
 * the algorithms' pieces): the ceiling runs exactly the script the API runs.
 */
export function decideLua() {
  return loadEngine().decideLua();
}
