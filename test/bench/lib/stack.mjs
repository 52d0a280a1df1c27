// A private Redis + Kafka for one benchmark run (docker/local/stack.sh with its own ports and state
// folder): the ledger bench fills outbox streams and topics, which must neither reach the shared
// stack's relays and projectors nor meet other engineers' traffic. `down` stops only what `up` started.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT } from './built.mjs';
import { freePort } from './processes.mjs';

const STACK_SH = join(ROOT, 'docker/local/stack.sh');

function stack(command, env, log) {
  return new Promise((resolve, reject) => {
    const child = execFile('bash', [STACK_SH, command], {
      env: { ...process.env, ...env },
      maxBuffer: 1 << 24,
    });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    child.once('exit', (code) => {
      for (const line of out.split('\n').filter(Boolean)) log(`  ${line}`);
      if (code === 0) resolve();
      else reject(new Error(`stack.sh ${command} exited with ${code}`));
    });
  });
}

/** A port from `name` in the environment (a machine where ports are assigned), else any free one. */
async function portFrom(name) {
  const given = Number.parseInt(process.env[name] ?? '', 10);
  return Number.isInteger(given) && given > 0 ? given : freePort();
}

/**
 * Starts the private stack; `BENCH_STACK_DIR` keeps its state somewhere known (else a temp folder),
 * `BENCH_STACK_REDIS_PORT`, `BENCH_STACK_KAFKA_PORT`, `BENCH_STACK_CONTROLLER_PORT` fix its ports.
 */
export async function startStack(log) {
  const dir = process.env.BENCH_STACK_DIR ?? mkdtempSync(join(tmpdir(), 'tally-ledger-bench-'));
  const redisPort = await portFrom('BENCH_STACK_REDIS_PORT');
  const kafkaPort = await portFrom('BENCH_STACK_KAFKA_PORT');
  const controllerPort = await portFrom('BENCH_STACK_CONTROLLER_PORT');
  const env = {
    STACK_DIR: dir,
    REDIS_URL: `redis://127.0.0.1:${redisPort}`,
    REDIS_PORT: String(redisPort),
    KAFKA_PORT: String(kafkaPort),
    KAFKA_CONTROLLER_PORT: String(controllerPort),
  };
  log(`private stack in ${dir}: redis :${redisPort}, kafka :${kafkaPort}`);
  const down = async () => {
    await stack('down', env, log).catch((error) => log(`stack down failed: ${error.message}`));
    if (process.env.BENCH_STACK_DIR === undefined) rmSync(dir, { recursive: true, force: true });
  };
  try {
    await stack('up', env, log);
  } catch (error) {
    await down();
    throw error;
  }
  return { redisUrl: env.REDIS_URL, brokers: `127.0.0.1:${kafkaPort}`, dir, down };
}
