// The built tree (dist/, CommonJS): the benchmark measures what `npm run start:decision-api` runs.
import { createRequire } from 'node:module';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

export const ROOT = new URL('../../../', import.meta.url).pathname;
export const API_MAIN = join(ROOT, 'dist/apps/decision-api/src/main.js');
const ENGINE_INDEX = join(ROOT, 'dist/libs/engine/src/index.js');
/** The source the engine loads: the ceiling runs exactly the script the API runs. */
export const DECIDE_LUA_PATH = join(ROOT, 'libs/engine/src/lua/decide.lua');

export function loadEngine() {
  if (!existsSync(ENGINE_INDEX)) throw new Error(`${ENGINE_INDEX} is missing: run npm run build first`);
  return createRequire(import.meta.url)(ENGINE_INDEX);
}

export function decideLua() {
  return readFileSync(DECIDE_LUA_PATH, 'utf8');
}
