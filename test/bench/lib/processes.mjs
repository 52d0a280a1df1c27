// Child processes of the benchmark (servers, a private redis-server): started by pid, stopped by pid,
// and never left behind if the run fails half-way.
import { spawn } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { join } from 'node:path';
import { createServer } from 'node:net';

const started = new Set();

// BENCH_PORT_RANGE=<from>-<to>: the bench's servers listen only on ports of that range (a machine
// shared by several people, each with a range of their own); else the kernel picks free ports.
const range = /^(\d+)-(\d+)$/.exec(process.env.BENCH_PORT_RANGE ?? '');
let nextInRange = range ? Number(range[1]) : 0;

/** A port nobody listens on right now. */
export async function freePort() {
  if (!range) return listenOn(0);
  while (nextInRange <= Number(range[2])) {
    const port = nextInRange++;
    try {
      return await listenOn(port);
    } catch {
      // taken: the next one
    }
  }
  throw new Error(`BENCH_PORT_RANGE=${process.env.BENCH_PORT_RANGE}: no free port left`);
}

function listenOn(wanted) {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(wanted, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/** Polls `probe` until it resolves truthy; a server that never comes up fails the run, not hangs it. */
export async function waitFor(what, probe, timeoutMs = 20_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      if (await probe()) return;
    } catch {
      // not up yet
    }
    if (Date.now() > deadline) throw new Error(`${what} did not become ready within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * Spawns a child and keeps the tail of its output: a server that dies at boot explains itself in the
 * failure message instead of in a log nobody reads.
 */
export function startProcess(name, command, args, env = {}) {
  const child = spawn(command, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  const tail = [];
  const keep = (chunk) => {
    tail.push(...chunk.toString().split('\n').filter(Boolean));
    tail.splice(0, Math.max(0, tail.length - 40));
  };
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  // BENCH_PROCESS_LOG_DIR: every line of every process the bench starts, kept (e.g. for --trace-gc).
  if (process.env.BENCH_PROCESS_LOG_DIR) {
    const file = createWriteStream(join(process.env.BENCH_PROCESS_LOG_DIR, `${name}-${child.pid}.log`));
    child.stdout.pipe(file);
    child.stderr.pipe(file);
  }
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  const handle = {
    name,
    pid: child.pid,
    exited,
    output: () => tail.join('\n'),
    alive: () => child.exitCode === null && child.signalCode === null,
    /** SIGTERM, then SIGKILL if it has not exited within `graceMs` (a profile needs a clean exit). */
    async stop(graceMs = 10_000) {
      started.delete(handle);
      if (!handle.alive()) return exited;
      process.kill(child.pid, 'SIGTERM');
      const timer = setTimeout(() => handle.alive() && process.kill(child.pid, 'SIGKILL'), graceMs);
      const result = await exited;
      clearTimeout(timer);
      return result;
    },
  };
  started.add(handle);
  return handle;
}

/** Last resort on an interrupted run: SIGKILL every child still running, each by its own pid. */
export function killAllStarted() {
  for (const handle of started) if (handle.alive()) process.kill(handle.pid, 'SIGKILL');
  started.clear();
}

process.once('exit', killAllStarted);
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.once(signal, () => {
    killAllStarted();
    process.exit(130);
  });
}
