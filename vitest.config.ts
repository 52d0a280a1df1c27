import { resolve } from 'node:path';
import swc from 'unplugin-swc';
import { defineConfig } from 'vitest/config';

// SWC instead of esbuild: Nest's DI needs decorator metadata, which esbuild does not emit.
const libs = [
  'config',
  'policy',
  'engine',
  'events',
  'ledger',
  'projections',
  'observability',
  'client',
  'testing',
  'http',
  'outbox',
  'ops',
  'envoy-rls',
  'api-contract',
  'redis',
  'errors',
  'auth',
  'cluster',
  'openapi',
];
// The client package's second entry comes first: an alias also matches `<find>/…`, so `@tally/client`
// would otherwise turn `@tally/client/nest` into `…/index.ts/nest`.
const alias = [
  { find: '@tally/client/nest', replacement: resolve(__dirname, 'libs/client/src/nest/index.ts') },
  ...libs.map((l) => ({ find: `@tally/${l}`, replacement: resolve(__dirname, `libs/${l}/src/index.ts`) })),
];
const plugins = [swc.vite({ module: { type: 'es6' } })];

export default defineConfig({
  plugins,
  resolve: { alias },
  test: {
    // Since vitest 5 an inline project extends this file: the plugins and aliases above apply to both.
    projects: [
      {
        test: {
          name: 'unit',
          include: ['libs/**/*.spec.ts', 'apps/**/*.spec.ts'],
          environment: 'node',
        },
      },
      {
        test: {
          name: 'integration',
          include: ['test/integration/**/*.test.ts', 'test/e2e/**/*.test.ts'],
          environment: 'node',
          globalSetup: ['test/global-setup.ts'],
          // One real Redis and one real broker are shared: files run one after another (vitest ≥ 4
          // dropped `poolOptions.forks.singleFork`; `fileParallelism: false` means one worker).
          pool: 'forks',
          fileParallelism: false,
          testTimeout: 60_000,
          hookTimeout: 180_000,
        },
      },
    ],
  },
});
