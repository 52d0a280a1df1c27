import { spawn } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { OpsError } from '@tally/ops';
import type { ParsedArgs } from './cli-args';
import type { CliContext, CliIo, CommandOutcome } from './cli-context';

/** What `scripts/bench.mjs` can run, in the order it runs them when none is named. */
export const BENCHES = ['hot-path', 'ledger'] as const;
const SCRIPT = join('scripts', 'bench.mjs');

/** `tally bench [hot-path|ledger] [--no-build]`: the repository's benchmarks, exit code and all. */
export async function benchCommand(args: ParsedArgs, ctx: CliContext): Promise<CommandOutcome> {
  const which = args.positionals.BENCH;
  return runBench({
    root: repoRoot(__dirname),
    benches: typeof which === 'string' ? [which] : BENCHES,
    build: args.options['no-build'] !== true,
    json: args.options.json === true,
    io: ctx.io,
  });
}

export interface BenchRun {
  /** Repository root: holds scripts/bench.mjs and receives .local/bench/<bench>.json. */
  readonly root: string;
  readonly benches: readonly string[];
  /** False: pass `--no-build` (reuse dist/ as it is). */
  readonly build: boolean;
  /** Print the benches' JSON reports at the end; their own output then goes to stderr. */
  readonly json: boolean;
  readonly io: CliIo;
}

/**
 * Spawns `node scripts/bench.mjs <bench…>` from the root with this process's Node, streaming its
 * lines as they come (to stderr under `--json`, so stdout stays one JSON document). The script
 * prints its own figures and writes `.local/bench/<bench>.json`; with `--json` those written by
 * this run are printed at the end, keyed by bench (null: the bench wrote none, e.g. it failed).
 */
export async function runBench(run: BenchRun): Promise<CommandOutcome> {
  const started = Date.now();
  const argv = [join(run.root, SCRIPT), ...run.benches, ...(run.build ? [] : ['--no-build'])];
  const child = spawn(process.execPath, argv, { cwd: run.root, stdio: ['ignore', 'pipe', 'pipe'] });
  const out = (line: string) => (run.json ? run.io.stderr(line) : run.io.stdout(line));
  const streamed = [
    forward(child.stdout, (line) => out(line)),
    forward(child.stderr, (line) => run.io.stderr(line)),
  ];
  const code = await new Promise<number>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (exitCode) => resolve(exitCode ?? 1));
  });
  await Promise.all(streamed);
  if (!run.json) return { exitCode: code, json: null, text: '' };
  const reports: Record<string, unknown> = {};
  for (const bench of run.benches) reports[bench] = reportSince(run.root, bench, started);
  return { exitCode: code, json: reports, text: '' };
}

function forward(stream: NodeJS.ReadableStream, line: (text: string) => void): Promise<void> {
  const lines = createInterface({ input: stream, crlfDelay: Infinity });
  lines.on('line', line);
  return new Promise((resolve) => lines.once('close', resolve));
}

/** The bench's JSON report if this run wrote it; an older file would pass stale figures off as new. */
function reportSince(root: string, bench: string, sinceMs: number): unknown {
  const file = join(root, '.local', 'bench', `${bench}.json`);
  if (!existsSync(file) || statSync(file).mtimeMs < sinceMs - 1000) return null;
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as unknown;
  } catch {
    return null;
  }
}

/** The repository root above this file, in the source tree (apps/cli/src) or the built one (dist/…). */
export function repoRoot(from: string): string {
  for (let dir = from; ; dir = dirname(dir)) {
    if (existsSync(join(dir, SCRIPT))) return dir;
    if (dirname(dir) === dir) {
      throw new OpsError(`cannot find ${SCRIPT} above ${from}: run tally from a checkout of the repository`);
    }
  }
}
