// The peer of the RLS bench: envoyproxy/ratelimit (Go), given as a binary built from its source
// (PEER_RATELIMIT_BIN), against a private redis-server of its own, configured as it ships except for
// what a local run needs (TCP Redis, no statsd sink, the bench's ports). Nothing of its code is in
// this repository; the bench prints how to build it when the binary is not given.
import { existsSync } from 'node:fs';
import { startProcess, waitFor } from './processes.mjs';

export const PEER_REPO = 'https://github.com/envoyproxy/ratelimit';

/** `bench`: the `npm run bench` name to run once the peer is built. */
export function peerBuildInstructions(bench = 'rls') {
  return [
    'PEER_RATELIMIT_BIN is not set: measuring Tally alone. To measure envoyproxy/ratelimit beside it,',
    'build it from source (Go ≥ its go.mod version) and point the bench at the binary:',
    `  git clone ${PEER_REPO} /tmp/ratelimit-src`,
    '  (cd /tmp/ratelimit-src && go build -o /tmp/ratelimit ./src/service_cmd)',
    `  PEER_RATELIMIT_BIN=/tmp/ratelimit npm run bench -- ${bench}`,
  ].join('\n');
}

/** A redis-server with no persistence on `port`, started and stopped by pid. */
export async function startPlainRedis(name, port, log) {
  const server = startProcess(name, 'redis-server', [
    '--port',
    String(port),
    '--bind',
    '127.0.0.1',
    '--save',
    '',
    '--appendonly',
    'no',
  ]);
  try {
    await waitFor(name, () => server.alive() && /Ready to accept/.test(server.output()), 10_000);
  } catch (error) {
    await server.stop();
    throw new Error(`${error.message} (port ${port} busy?)\n${server.output()}`);
  }
  log(`${name} pid ${server.pid} on :${port}`);
  return { url: `redis://127.0.0.1:${port}`, pid: server.pid, stop: () => server.stop() };
}

/**
 * Starts the peer on `ports` (`http`, `grpc`, `debug`) with its config under `runtimeRoot`
 * (`<root>/ratelimit/config/*.yaml`) and Redis at `redisPort`. Ready = its /healthcheck answers.
 */
export async function startPeer({ bin, runtimeRoot, redisPort, ports }, log) {
  if (!existsSync(bin)) throw new Error(`PEER_RATELIMIT_BIN=${bin} does not exist`);
  const env = {
    HOST: '127.0.0.1',
    PORT: String(ports.http),
    GRPC_HOST: '127.0.0.1',
    GRPC_PORT: String(ports.grpc),
    DEBUG_HOST: '127.0.0.1',
    DEBUG_PORT: String(ports.debug),
    RUNTIME_ROOT: runtimeRoot,
    RUNTIME_SUBDIRECTORY: 'ratelimit',
    RUNTIME_WATCH_ROOT: 'false',
    RUNTIME_IGNOREDOTFILES: 'true',
    REDIS_SOCKET_TYPE: 'tcp',
    REDIS_URL: `127.0.0.1:${redisPort}`,
    // No statsd agent here: its stats sink would only log connection errors.
    USE_STATSD: 'false',
    LOG_LEVEL: 'warn',
  };
  const child = startProcess('ratelimit', bin, [], env);
  try {
    await waitFor(
      'ratelimit',
      async () => (await fetch(`http://127.0.0.1:${ports.http}/healthcheck`)).ok,
      30_000,
    );
  } catch (error) {
    await child.stop();
    throw new Error(`${error.message}\n${child.output()}`);
  }
  log(`envoyproxy/ratelimit pid ${child.pid}: http :${ports.http}, grpc :${ports.grpc}`);
  return {
    pid: child.pid,
    jsonUrl: `http://127.0.0.1:${ports.http}/json`,
    grpcTarget: `127.0.0.1:${ports.grpc}`,
    async stop() {
      const exit = await child.stop();
      if (exit.code !== 0 && exit.signal !== 'SIGTERM')
        log(`ratelimit exited with ${JSON.stringify(exit)}\n${child.output()}`);
    },
  };
}
