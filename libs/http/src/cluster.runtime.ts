/**
 * The memory settings a worker process runs with, measured for the decision API (docs/benchmarks.md,
 * "Decision API memory"). The same words are in `npm run start:decision-api`, scripts/services.sh and
 * docker/compose.yml (a unit test keeps them equal); here they also reach workers whose primary was
 * started without them (`node main.js` by hand): on V8's defaults the young generation alone grows to
 * 134 MB under load. Not here: `--heap-growing-percent=50`, which marks the old generation sooner
 * (≈ 15 MB less per worker) for more CPU per request; an operator who prefers memory gives it to the
 * primary and every worker inherits it.
 */
export const WORKER_NODE_FLAGS: readonly string[] = ['--max-semi-space-size=8'];

/**
 * glibc's malloc makes up to 8 arenas per core, one per thread that allocates (V8's GC and compiler
 * threads, libuv's pool); two are enough for a process whose JavaScript runs on one thread, and the
 * others' partly used 64 MB regions are gone from its RSS. Read by the C library at process start only,
 * so it is given in the environment of the process, never set from inside it.
 */
export const WORKER_ENV: Readonly<Record<string, string>> = { MALLOC_ARENA_MAX: '2' };

/** A flag's name (`--max-semi-space-size`), V8 taking `_` and `-` alike. */
function flagName(arg: string): string {
  return arg.split('=')[0].replaceAll('_', '-');
}

/**
 * A forked worker's node flags: the primary's own (`process.execArgv`) and each default the operator
 * did not set, on the command line or in NODE_OPTIONS (an operator's own value always wins).
 */
export function workerExecArgv(
  execArgv: readonly string[],
  nodeOptions: string | undefined,
  defaults: readonly string[] = WORKER_NODE_FLAGS,
): string[] {
  const given = new Set([...execArgv, ...(nodeOptions ?? '').split(/\s+/)].filter(Boolean).map(flagName));
  return [...execArgv, ...defaults.filter((flag) => !given.has(flagName(flag)))];
}

/** The environment entries a forked worker gets on top of the primary's: the defaults it lacks. */
export function workerEnv(
  env: Readonly<Record<string, string | undefined>>,
  defaults: Readonly<Record<string, string>> = WORKER_ENV,
): Record<string, string> {
  return Object.fromEntries(Object.entries(defaults).filter(([name]) => env[name] === undefined));
}
