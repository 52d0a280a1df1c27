import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { layoutPrelude } from './decide-layout';
import { ALGORITHM_REGISTRY } from './registry';

/** The engine's lua/ folder (beside the compiled code too: `npm run build` copies it). */
export const LUA_DIR = join(__dirname, '..', 'lua');

/** A `-- @<name>` line of a script's frame: replaced by generated Lua when the script is loaded. */
function fill(frame: string, marker: string, lua: string): string {
  const line = new RegExp(`^-- @${marker}\\b.*$`, 'm');
  if (!line.test(frame)) throw new Error(`decide.lua: no "-- @${marker}" line`);
  return frame.replace(line, () => lua);
}

/** The registry's Lua pieces (`lua/algorithms/<file>`), each once, in registry order. */
export function algorithmPieces(): string {
  const files = new Set<string>();
  for (const entry of Object.values(ALGORITHM_REGISTRY)) if (entry.lua !== undefined) files.add(entry.lua);
  return [...files].map((f) => readFileSync(join(LUA_DIR, 'algorithms', f), 'utf8')).join('\n');
}

/**
 * decide.lua as Redis runs it: the frame (`lua/decide.lua`, with its legend) with the layout's
 * constants and the algorithms' pieces put in. Assembled once per process: still one script, one
 * EVALSHA per decision (docs/adr/0001-one-script-per-decision.md).
 */
export function decideSource(): string {
  const frame = readFileSync(join(LUA_DIR, 'decide.lua'), 'utf8');
  return fill(fill(frame, 'layout', layoutPrelude()), 'algorithms', algorithmPieces());
}
