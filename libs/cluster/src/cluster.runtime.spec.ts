import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  JEMALLOC_CONF,
  WORKER_ENV,
  LEDGER_NODE_FLAGS,
  WORKER_NODE_FLAGS,
  allocatorOf,
  jemallocPaths,
  workerAllocatorEnv,
  workerEnv,
  workerExecArgv,
} from './cluster.runtime';

const ROOT = join(__dirname, '../../..');
const read = (path: string): string => readFileSync(join(ROOT, path), 'utf8');

describe(workerExecArgv.name, () => {
  it('adds every default flag to a primary started without flags', () => {
    expect(workerExecArgv([], undefined)).toEqual([...WORKER_NODE_FLAGS]);
  });

  it('keeps the primary own flags and adds only the defaults it lacks', () => {
    const sut = workerExecArgv(['--enable-source-maps', '--max-semi-space-size=16'], undefined, [
      '--max-semi-space-size=4',
      '--heap-growing-percent=30',
    ]);
    expect(sut).toEqual(['--enable-source-maps', '--max-semi-space-size=16', '--heap-growing-percent=30']);
  });

  it('leaves a flag set in NODE_OPTIONS to NODE_OPTIONS, whichever of - and _ it is spelled with', () => {
    const sut = workerExecArgv([], '--max_semi_space_size=32  --inspect', [
      '--max-semi-space-size=4',
      '--heap-growing-percent=30',
    ]);
    expect(sut).toEqual(['--heap-growing-percent=30']);
  });
});

describe(workerEnv.name, () => {
  it('adds the defaults the environment lacks, never overrides one that is set', () => {
    expect(workerEnv({ PATH: '/bin' }, { MALLOC_ARENA_MAX: '2' })).toEqual({ MALLOC_ARENA_MAX: '2' });
    expect(workerEnv({ MALLOC_ARENA_MAX: '8' }, { MALLOC_ARENA_MAX: '2' })).toEqual({});
  });
});

describe(workerAllocatorEnv.name, () => {
  it("preloads the first jemalloc found, this architecture's Debian path first, with its settings", () => {
    const arm = '/usr/lib/aarch64-linux-gnu/libjemalloc.so.2';
    expect(workerAllocatorEnv({}, () => true, 'arm64')).toEqual({
      LD_PRELOAD: arm,
      MALLOC_CONF: JEMALLOC_CONF,
    });
    expect(workerAllocatorEnv({}, () => true, 'x64').LD_PRELOAD).toBe(
      '/usr/lib/x86_64-linux-gnu/libjemalloc.so.2',
    );
    expect(workerAllocatorEnv({}, (path) => path.startsWith('/usr/local/'), 'x64').LD_PRELOAD).toBe(
      '/usr/local/lib/libjemalloc.so.2',
    );
    // never another architecture's library: the loader would refuse it
    expect(jemallocPaths('x64')).not.toContain(arm);
    expect(jemallocPaths('riscv64')).toEqual([
      '/usr/lib64/libjemalloc.so.2',
      '/usr/lib/libjemalloc.so.2',
      '/usr/local/lib/libjemalloc.so.2',
    ]);
  });

  it('keeps glibc malloc when no jemalloc is installed', () => {
    expect(workerAllocatorEnv({}, () => false)).toEqual({});
  });

  it("leaves the operator's LD_PRELOAD (an empty one too) and MALLOC_CONF as they are", () => {
    expect(workerAllocatorEnv({ LD_PRELOAD: '' }, () => true)).toEqual({});
    expect(workerAllocatorEnv({ LD_PRELOAD: '/opt/mimalloc.so' }, () => true)).toEqual({});
    expect(workerAllocatorEnv({ MALLOC_CONF: 'narenas:4' }, () => true, 'x64')).toEqual({
      LD_PRELOAD: '/usr/lib/x86_64-linux-gnu/libjemalloc.so.2',
    });
  });

  it('names the allocator for the start line', () => {
    expect(allocatorOf({ LD_PRELOAD: '/usr/lib/libjemalloc.so.2' })).toBe(
      'jemalloc (/usr/lib/libjemalloc.so.2)',
    );
    expect(allocatorOf({})).toBe('glibc malloc');
    expect(allocatorOf({ LD_PRELOAD: '/opt/mimalloc.so' })).toBe('/opt/mimalloc.so');
  });
});

describe('the decision API start paths', () => {
  const env = Object.entries(WORKER_ENV).map(([name, value]) => `${name}=${value}`);

  it('npm run start:decision-api runs with the same flags and environment', () => {
    const script = (JSON.parse(read('package.json')) as { scripts: Record<string, string> }).scripts[
      'start:decision-api'
    ];
    expect(script).toBe(
      `${env.join(' ')} node ${WORKER_NODE_FLAGS.join(' ')} dist/apps/decision-api/src/main.js`,
    );
  });

  it('./dev start (scripts/services.sh) runs with the same flags and environment', () => {
    const services = read('scripts/services.sh');
    expect(services).toContain(`flags=(${WORKER_NODE_FLAGS.join(' ')})`);
    expect(services).toContain(`envs=(${env.join(' ')})`);
  });

  it('the app image installs the jemalloc the primary preloads into its workers', () => {
    expect(read('docker/app.Dockerfile')).toContain('install -y --no-install-recommends libjemalloc2');
  });

  it('docker compose runs the decision API with the same flags and environment', () => {
    const compose = read('docker/compose.yml');
    // (a command, not NODE_OPTIONS: node refuses --heap-growing-percent there)
    expect(compose).toContain(
      `command: node ${WORKER_NODE_FLAGS.join(' ')} dist/apps/decision-api/src/main.js\n`,
    );
    for (const [name, value] of Object.entries(WORKER_ENV)) expect(compose).toContain(`${name}: '${value}'`);
  });
});

describe('the relay and projector start paths', () => {
  const flags = LEDGER_NODE_FLAGS.join(' ');

  it.each(['relay', 'projector'])('npm run start:%s runs with the young generation cap', (app) => {
    const scripts = (JSON.parse(read('package.json')) as { scripts: Record<string, string> }).scripts;
    expect(scripts[`start:${app}`]).toBe(`node ${flags} dist/apps/${app}/src/main.js`);
  });

  it('./dev start (scripts/services.sh) starts them with it', () => {
    expect(read('scripts/services.sh')).toContain(`local flags=(${flags}) envs=()`);
  });

  it.each(['relay', 'projector'])('docker compose runs the %s with it', (app) => {
    expect(read('docker/compose.yml')).toContain(`command: node ${flags} dist/apps/${app}/src/main.js\n`);
  });
});
