/**
 * `@tally/client` as a published package: built on its own, packed with `npm pack`, installed from
 * the tarball into a scratch project in a temp folder (offline from the npm cache: its one dependency
 * is TypeBox, for the contract's types; its Nest peers are optional), and used from there, outside this repository, against the real decision
 * API (in process, real Redis). The core entry must not load Nest even when Nest is resolvable.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { uniqueName } from '@tally/testing';
import { CALLER_TOKEN, DecisionApiHarness, ULID } from './support/decision-api.harness';

const run = promisify(execFile);
const root = resolve(__dirname, '../..');
const POLICY = uniqueName('e2e-package');
const POLICIES = `
policies:
  - name: ${POLICY}
    match: { route: packaged }
    key: [tenant]
    windows:
      - { name: hourly, role: sustained, algorithm: fixed_window, limit: 2, period: 1h }
`;

/**
 * Makes one decision with the installed package and reports what the process loaded. `require.cache`
 * holds every CommonJS module loaded so far, also those an ES module imported.
 */
const PROBE = `
const loaded = () => Object.keys(require.cache);
module.exports = async function probe(TallyClient, tenant) {
  const client = new TallyClient({
    baseUrl: process.env.TALLY_URL, token: process.env.TALLY_TOKEN, timeoutMs: 5000, failMode: 'closed',
  });
  const decision = await client.decide({ selectors: { tenant, route: 'packaged' } });
  client.close();
  process.stdout.write(JSON.stringify({ decision, loaded: loaded() }));
};
`;
const FILES: Record<string, string> = {
  'probe.cjs': PROBE,
  'decide.cjs': `require('./probe.cjs')(require('@tally/client').TallyClient, process.argv[2]);`,
  'decide.mjs': `import { createRequire } from 'node:module';
import { TallyClient } from '@tally/client';
await createRequire(import.meta.url)('./probe.cjs')(TallyClient, process.argv[2]);`,
  'nest.cjs': `require('@tally/client/nest');
process.stdout.write(JSON.stringify({ loaded: Object.keys(require.cache) }));`,
  'deep.cjs': `require('@tally/client/dist/tally.client.js');`,
  'check.ts': `import { TallyClient, TallyRequestError, type TallyDecision } from '@tally/client';
const client = new TallyClient({ baseUrl: 'http://tally:8080', token: 't' });
export const pending: Promise<TallyDecision> = client.decide({ selectors: { tenant: 'a' }, cost: 1 });
export const isRequestError = (e: unknown): boolean => e instanceof TallyRequestError;
// @ts-expect-error: the published types reject a cost that is not a number
void client.decide({ selectors: { tenant: 'a' }, cost: '1' });`,
};

interface Probe {
  readonly decision?: Record<string, unknown>;
  readonly loaded: string[];
}

let api: DecisionApiHarness;
let scratch: string;

/** Runs node in the scratch project; NODE_PATH makes this repository's Nest resolvable from it. */
async function node(file: string, ...args: string[]): Promise<Probe> {
  const env = {
    ...process.env,
    TALLY_URL: api.baseUrl,
    TALLY_TOKEN: CALLER_TOKEN,
    NODE_PATH: join(root, 'node_modules'),
  };
  const { stdout } = await run(process.execPath, [file, ...args], { cwd: scratch, env });
  return JSON.parse(stdout) as Probe;
}

const nestModules = (loaded: readonly string[]): string[] => loaded.filter((p) => p.includes('@nestjs'));

beforeAll(async () => {
  api = await DecisionApiHarness.start({ redisUrl: inject('redisUrl'), policies: POLICIES });
  scratch = await mkdtemp(join(tmpdir(), 'tally-client-package-'));
  await run(process.execPath, [join(root, 'scripts/build-client.mjs')], { cwd: root });
  await run('npm', ['pack', join(root, 'libs/client'), '--pack-destination', scratch], { cwd: scratch });
  const [tarball] = (await readdir(scratch)).filter((f) => f.endsWith('.tgz'));
  await writeFile(
    join(scratch, 'package.json'),
    JSON.stringify({ name: 'scratch', version: '1.0.0', private: true }),
  );
  for (const [name, text] of Object.entries(FILES)) await writeFile(join(scratch, name), text);
  // Offline from the npm cache; npm still wants the optional Nest peers' metadata to plan the tree,
  // which a fresh cache may lack: then (only then) it may ask the registry for that metadata.
  const install = ['install', '--no-audit', '--no-fund', '--ignore-scripts', `./${tarball}`];
  await run('npm', [...install, '--offline'], { cwd: scratch }).catch(() =>
    run('npm', [...install, '--prefer-offline'], { cwd: scratch }),
  );
});
afterAll(async () => {
  await api?.close();
  if (scratch !== undefined) await rm(scratch, { recursive: true, force: true });
});

describe('@tally/client package', () => {
  it('installs from its tarball with the contract types beside it, and no Nest pulled in', () => {
    const installed = join(scratch, 'node_modules');

    expect(existsSync(join(installed, '@tally/client/dist/client/src/index.js'))).toBe(true);
    expect(existsSync(join(installed, '@tally/client/dist/client/src/index.d.ts'))).toBe(true);
    // the wire types come from the API contract, shipped in the package beside the client
    expect(existsSync(join(installed, '@tally/client/dist/api-contract/src/index.d.ts'))).toBe(true);
    // the local limiter's maths is window-math's, shipped (and loaded) from the package too
    expect(existsSync(join(installed, '@tally/client/dist/window-math/src/index.js'))).toBe(true);
    expect(existsSync(join(installed, '@nestjs'))).toBe(false);
  });

  it.each(['decide.cjs', 'decide.mjs'])(
    '%s: decides against the running API and never loads Nest',
    async (file) => {
      const tenant = uniqueName('pkg');

      const first = await node(file, tenant);
      const second = await node(file, tenant);
      const third = await node(file, tenant);

      expect(first.decision).toMatchObject({
        status: 200,
        allowed: true,
        decision_id: expect.stringMatching(ULID),
      });
      expect(second.decision).toMatchObject({ status: 200, allowed: true });
      expect(third.decision).toMatchObject({
        status: 429,
        allowed: false,
        reason: 'sustained_quota_exhausted',
        rateLimit: { binding: { policy: POLICY, window: 'hourly', remaining: 0 } },
      });
      // The probe sees the package's own files, so an empty Nest list is not an empty cache.
      expect(first.loaded).toContainEqual(
        expect.stringMatching(
          /node_modules[\\/]@tally[\\/]client[\\/]dist[\\/]client[\\/]src[\\/]tally\.client\.js$/,
        ),
      );
      expect(nestModules(first.loaded)).toEqual([]);
    },
  );

  it('the Nest entry is separate: it loads Nest (the probe sees it when it is loaded)', async () => {
    const sut = await node('nest.cjs');

    expect(nestModules(sut.loaded).length).toBeGreaterThan(0);
    expect(sut.loaded).toContainEqual(
      expect.stringMatching(/@tally[\\/]client[\\/]dist[\\/]client[\\/]src[\\/]nest[\\/]tally\.guard\.js$/),
    );
  });

  it('exposes only its entries: a deep import is refused', async () => {
    await expect(node('deep.cjs')).rejects.toThrow(/ERR_PACKAGE_PATH_NOT_EXPORTED/);
  });

  it('ships types a TypeScript project resolves through the exports map', async () => {
    const tsc = join(root, 'node_modules/.bin/tsc');
    const args = ['--noEmit', '--strict', '--skipLibCheck', '--module', 'nodenext', '--types', 'node'];
    const typeRoots = ['--typeRoots', join(root, 'node_modules/@types')];

    await expect(run(tsc, [...args, ...typeRoots, 'check.ts'], { cwd: scratch })).resolves.toBeDefined();
  });
});
