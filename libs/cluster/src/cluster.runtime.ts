import { existsSync } from 'node:fs';

/**
 * The memory settings a worker process runs with, measured for the decision API (docs/benchmarks.md,
 * "Decision API memory"). The same words are in `npm run start:decision-api`, scripts/services.sh and
 * docker/compose.yml (a unit test keeps them equal); here they also reach workers whose primary was
 * started without them (`node main.js` by hand): on V8's defaults the young generation alone grows to
 * 134 MB under load. 8 MB semi-spaces hold a worker's young generation to 16 MB; a 50 % growing factor
 * marks the old generation once it has grown by half its live size, where V8 would let it reach 3–4 ×
 * (on the gRPC path, where each call leaves a few KB to the next mark-compact, that was 100+ MB).
 * Against 4 MB semi-spaces a worker peaks ≈ 7 MB higher and an HTTP decision at 2,000/s costs ≈ 8 %
 * less CPU (fewer scavenges, each copying the same few calls in flight); 16 MB cost HTTP more again.
 */
export const WORKER_NODE_FLAGS: readonly string[] = ['--max-semi-space-size=8', '--heap-growing-percent=50'];

/**
 * The relay's and the projector's young generation cap, on every start path (`npm run start:relay`,
 * `start:projector`, scripts/services.sh, docker/compose.yml; a unit test keeps them equal). On V8's
 * defaults a relay at 2,000 decisions/s settled, process by process at random, into one of two
 * states: a mark-compact every 5–10 s, or one every 0.3–0.6 s for as long as it ran. In the second,
 * V8's young generation had grown past the old generation's slack (29 MB live, 40 MB to the limit),
 * so each mark-compact started the next incremental marking at once; the GC threads then cost as
 * much as the relay's JavaScript (≈ 40 µs CPU per decision each). 8 MB semi-spaces keep the young
 * generation below that slack: 1 mark-compact per run in every process measured, GC threads ≈ 4 µs
 * (docs/benchmarks.md, "The relay's two GC states"). A semi-space of 4 MB promotes the relay's
 * batches (they live ≈ 100 ms) and costs more.
 */
export const LEDGER_NODE_FLAGS: readonly string[] = ['--max-semi-space-size=8'];

/**
 * glibc's malloc makes up to 8 arenas per core, one per thread that allocates (V8's GC and compiler
 * threads, libuv's pool); two are enough for a process whose JavaScript runs on one thread, and the
 * others' partly used 64 MB regions are gone from its RSS. Read by the C library at process start only,
 * so it is given in the environment of the process, never set from inside it.
 */
export const WORKER_ENV: Readonly<Record<string, string>> = { MALLOC_ARENA_MAX: '2' };

/** Debian's multiarch library folder per Node architecture. */
const MULTIARCH: Readonly<Record<string, string>> = { x64: 'x86_64-linux-gnu', arm64: 'aarch64-linux-gnu' };

/**
 * Where jemalloc 5 may be installed, first where Debian and Ubuntu put it for this architecture
 * (package `libjemalloc2`, which Debian's redis-server depends on, and which the app image installs).
 */
export function jemallocPaths(arch: string = process.arch): string[] {
  const multiarch = MULTIARCH[arch];
  return [
    ...(multiarch === undefined ? [] : [`/usr/lib/${multiarch}/libjemalloc.so.2`]),
    '/usr/lib64/libjemalloc.so.2',
    '/usr/lib/libjemalloc.so.2',
    '/usr/local/lib/libjemalloc.so.2',
  ];
}

/**
 * jemalloc's settings for a worker: two arenas (as MALLOC_ARENA_MAX above), and freed pages handed
 * back to the system within a second by a background thread (`dirty_decay_ms`), none kept in between.
 */
export const JEMALLOC_CONF = 'narenas:2,background_thread:true,dirty_decay_ms:1000,muzzy_decay_ms:0';

/**
 * The allocator a forked worker gets. glibc keeps what V8's optimizing compiler frees (its zones peak
 * at 15–25 MB while a hot function compiles under load) and what sockets' buffers free in the middle of
 * its heap: a worker that ran 20 s of gRPC load held ≈ 29 MB that `malloc_trim(0)` gave back at once.
 * jemalloc returns them within its decay time. So when a jemalloc library is found, workers preload
 * it, unless the operator chose: an `LD_PRELOAD` in the primary's environment (an empty one: glibc's
 * malloc) is left as it is, and so is a `MALLOC_CONF` of their own.
 */
export function workerAllocatorEnv(
  env: Readonly<Record<string, string | undefined>>,
  exists: (path: string) => boolean = existsSync,
  arch: string = process.arch,
): Record<string, string> {
  if (env.LD_PRELOAD !== undefined) return {};
  const path = jemallocPaths(arch).find((candidate) => exists(candidate));
  if (path === undefined) return {};
  return { LD_PRELOAD: path, ...(env.MALLOC_CONF === undefined ? { MALLOC_CONF: JEMALLOC_CONF } : {}) };
}

/** What a worker's allocator is, for the primary's start line. */
export function allocatorOf(env: Readonly<Record<string, string | undefined>>): string {
  const preload = env.LD_PRELOAD ?? '';
  return preload.includes('jemalloc') ? `jemalloc (${preload})` : preload === '' ? 'glibc malloc' : preload;
}

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
