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

/** One algorithm's sections of a piece file (lua/algorithms/*.lua): Lua statements, each ending in a return. */
export interface LuaPiece {
  readonly letter: string;
  readonly read: string;
  readonly eval: string;
  readonly pack: string;
  readonly slack: number;
}

/**
 * Reads a piece file: its legend (ignored), `-- @shared` statements, then per algorithm `-- @piece
 * <letter>` with its `-- @read`, `-- @eval`, `-- @pack` sections and `-- @slack <periods>`.
 */
export function parsePieceFile(text: string): { shared: string; pieces: LuaPiece[] } {
  const shared: string[] = [];
  const pieces: { letter: string; read: string[]; eval: string[]; pack: string[]; slack: number }[] = [];
  let into: string[] | undefined;
  for (const line of text.split('\n')) {
    const marker = /^-- @(shared|piece|read|eval|pack|slack)\b ?(.*)$/.exec(line);
    if (marker === null) {
      into?.push(line);
      continue;
    }
    const [, what, arg] = marker;
    const piece = pieces[pieces.length - 1];
    if (what === 'shared') into = shared;
    else if (what === 'piece') {
      pieces.push({ letter: arg, read: [], eval: [], pack: [], slack: 0 });
      into = undefined;
    } else if (piece === undefined) throw new Error(`piece file: -- @${what} before -- @piece`);
    else if (what === 'slack') {
      piece.slack = Number(arg);
      into = undefined;
    } else into = piece[what as 'read' | 'eval' | 'pack'];
  }
  const text_ = (lines: string[]) => lines.join('\n').trim();
  return {
    shared: text_(shared),
    pieces: pieces.map((p) => ({
      letter: p.letter,
      read: text_(p.read),
      eval: text_(p.eval),
      pack: text_(p.pack),
      slack: p.slack,
    })),
  };
}

/** One function whose branches are the pieces' sections for each letter. */
function dispatch(
  name: string,
  params: string,
  pieces: readonly LuaPiece[],
  section: 'read' | 'eval' | 'pack',
): string {
  const branches = pieces.map(
    (p, i) => `  ${i === 0 ? 'if' : 'elseif'} alg == '${p.letter}' then\n${indent(p[section])}`,
  );
  return `local function ${name}(alg, ${params})\n${branches.join('\n')}\n  end\nend`;
}

const indent = (lua: string) =>
  lua
    .split('\n')
    .map((l) => (l === '' ? l : `    ${l}`))
    .join('\n');

/**
 * The registry's Lua pieces (`lua/algorithms/<file>`, each file once, in registry order) as the
 * script's `alg_read`, `alg_eval`, `alg_pack` and `ALG_SLACK`: one function per step with a branch
 * per algorithm, not a table of closures, so a call creates no closure per algorithm (the script
 * runs its whole text on every call).
 */
export function algorithmPieces(): string {
  const files = new Set<string>();
  for (const entry of Object.values(ALGORITHM_REGISTRY)) if (entry.lua !== undefined) files.add(entry.lua);
  const parsed = [...files].map((f) => parsePieceFile(readFileSync(join(LUA_DIR, 'algorithms', f), 'utf8')));
  const pieces = parsed.flatMap((p) => p.pieces);
  return [
    ...parsed.map((p) => p.shared).filter((s) => s !== ''),
    dispatch('alg_read', 'v', pieces, 'read'),
    dispatch('alg_eval', 'limit, period, param, s1, s2, s3, cost', pieces, 'eval'),
    dispatch('alg_pack', 'x, y, z', pieces, 'pack'),
    `local ALG_SLACK = { ${pieces.map((p) => `${p.letter} = ${p.slack}`).join(', ')} }`,
  ].join('\n\n');
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
