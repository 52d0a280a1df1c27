import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { WORKER_ENV, WORKER_NODE_FLAGS, workerEnv, workerExecArgv } from './cluster.runtime';

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

  it('docker compose runs the decision API with the same flags and environment', () => {
    const compose = read('docker/compose.yml');
    expect(compose).toContain(`NODE_OPTIONS: ${WORKER_NODE_FLAGS.join(' ')}\n`);
    for (const [name, value] of Object.entries(WORKER_ENV)) expect(compose).toContain(`${name}: '${value}'`);
  });
});
