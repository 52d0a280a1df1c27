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
  'redis',
];
const alias = Object.fromEntries(
  libs.map((l) => [`@tally/${l}`, resolve(__dirname, `libs/${l}/src/index.ts`)]),
);
const plugins = [swc.vite({ module: { type: 'es6' } })];

export default defineConfig({
  plugins,
  resolve: { alias },
  test: {
    projects: [
      {
        plugins,
        resolve: { alias },
        test: {
          name: 'unit',
          include: ['libs/**/*.spec.ts', 'apps/**/*.spec.ts'],
          environment: 'node',
        },
      },
      {
        plugins,
        resolve: { alias },
        test: {
          name: 'integration',
          include: ['test/integration/**/*.test.ts', 'test/e2e/**/*.test.ts'],
          environment: 'node',
          globalSetup: ['test/global-setup.ts'],
          // One real Redis and one real broker are shared: files run one after another.
          pool: 'forks',
          poolOptions: { forks: { singleFork: true } },
          testTimeout: 60_000,
          hookTimeout: 180_000,
        },
      },
    ],
  },
});
