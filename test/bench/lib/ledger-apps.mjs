// The ledger's processes under test, each a child of the built tree on the private stack: the relay
// and the projector (the decision API comes from servers.mjs). Ready = /healthz answers. And the
// ledger topics they ship to and read, made by the ledger's own provisioner.
import { join } from 'node:path';
import { loadBuilt, PROJECTOR_MAIN, RELAY_MAIN, ROOT } from './built.mjs';
import { freePort, startProcess, waitFor } from './processes.mjs';
import { startCommand } from './servers.mjs';

/** The ledger topics on `brokers` (comma-separated), `partitions` each, as the apps would make them. */
export async function ensureLedgerTopics(brokers, partitions, clientId) {
  const { createLedger, ledgerTopicSpecs } = loadBuilt('libs/ledger/src/index.js');
  const ledger = createLedger({ brokers: brokers.split(','), clientId, logLevel: 'nothing' });
  try {
    await ledger.provisioner.ensureTopics(ledgerTopicSpecs({ partitions, replicationFactor: 1 }));
  } finally {
    await ledger.close();
  }
}

/** The settings every app of the run shares: the stack, shards, partitions, bench tokens. */
export function appEnv(stack, settings) {
  return {
    REDIS_URL: stack.redisUrl,
    KAFKA_BROKERS: stack.brokers,
    TALLY_SHARDS: String(settings.shards),
    TALLY_TOPIC_PARTITIONS: String(settings.partitions),
    TALLY_AUTH: 'bearer',
    TALLY_API_TOKENS: 'bench-caller-token-0123456789',
    TALLY_ADMIN_TOKEN: 'bench-admin-token-0123456789',
    TALLY_TOKEN_SECRET: 'bench-token-secret-0123456789',
    TALLY_LOG_LEVEL: 'warn',
  };
}

/**
 * `main` with the node flags of its build's `npm run start:<app>` (the bench measures what production
 * runs; a build whose script has none runs without), then BENCH_APP_NODE_ARGS, then `nodeArgs`.
 */
async function startApp(name, main, portVar, env, log, fixedPort, nodeArgs = []) {
  const port = fixedPort ?? (await freePort());
  const extra = (process.env.BENCH_APP_NODE_ARGS ?? '').split(' ').filter(Boolean);
  const app = /\/dist\/apps\/([a-z-]+)\/src\/main\.js$/.exec(main);
  const build = app ? main.slice(0, app.index) : ROOT;
  const start = startCommand(join(build, 'package.json'), app?.[1] ?? 'relay');
  const child = startProcess(name, process.execPath, [...start.flags, ...extra, ...nodeArgs, main], {
    ...env,
    [portVar]: String(port),
  });
  try {
    await waitFor(name, async () => (await fetch(`http://127.0.0.1:${port}/healthz`)).status < 500, 60_000);
  } catch (error) {
    await child.stop();
    throw new Error(`${error.message}\n${child.output()}`);
  }
  log(`${name} pid ${child.pid} on :${port}`);
  return {
    pid: child.pid,
    port,
    async stop() {
      const exit = await child.stop(20_000);
      if (exit.code !== 0) log(`${name} exited with ${JSON.stringify(exit)}\n${child.output()}`);
    },
  };
}

/**
 * `port`: the relay's health and metrics port (default: any free one); `dist`: another build's
 * (a baseline), else this tree's.
 */
export function startRelay(stack, settings, log, port, dist) {
  const main = dist ? join(dist, 'apps/relay/src/main.js') : RELAY_MAIN;
  return startApp('relay', main, 'TALLY_RELAY_PORT', appEnv(stack, settings), log, port);
}

/**
 * Relay variants to compare, from `name=dist[,VAR=value…][,--node-flag…];…` (dist relative to the
 * checkout; a bare name is this tree's `dist`): `{ name, main, env, nodeArgs }`. An `.mjs` instead of a dist is a relay entry of
 * its own (e.g. test/bench/lib/relay-rdkafka-main.mjs, the librdkafka producer), running the
 * checkout's dist/ (or BENCH_DIST among the variant's VAR=value).
 */
export function relayVariants(spec) {
  return spec.split(';').map((one) => {
    const at = one.indexOf('=');
    const [name, rest] = at < 0 ? [one, 'dist'] : [one.slice(0, at), one.slice(at + 1)];
    const [dist, ...vars] = rest.split(',');
    return {
      name,
      main: dist.endsWith('.mjs') ? join(ROOT, dist) : join(ROOT, dist, 'apps/relay/src/main.js'),
      env: Object.fromEntries(vars.filter((v) => !v.startsWith('--')).map((v) => v.split('='))),
      nodeArgs: vars.filter((v) => v.startsWith('--')),
    };
  });
}

/** A relay variant (`relayVariants`) on the stack, its own env over the run's; stop it with `.stop()`. */
export function startRelayVariant(stack, settings, variant, log) {
  const env = { ...appEnv(stack, settings), ...variant.env };
  return startApp(
    `relay-${variant.name}`,
    variant.main,
    'TALLY_RELAY_PORT',
    env,
    log,
    undefined,
    variant.nodeArgs,
  );
}

export function startProjector(stack, settings, log) {
  return startApp('projector', PROJECTOR_MAIN, 'TALLY_PROJECTOR_PORT', appEnv(stack, settings), log);
}
