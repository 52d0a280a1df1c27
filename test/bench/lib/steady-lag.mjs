// Decision → projection lag under the steady bench: the projector is started on the newest offsets
// (`tally consumers reset --to latest` first, so the backlog of the measured rounds is skipped, not
// folded), then marker decisions of fresh tenants are sent every 100 ms over HTTP beside a background
// load at a fixed rate; each marker's lag runs from its answer (HTTP 200 at the bench) to its usage
// row in the active projection namespace (polled every 10 ms): outbox → relay → Kafka → projector →
// Redis, the API's own latency left out.
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { DIST, loadBuilt } from './built.mjs';
import { appEnv, startProjector } from './ledger-apps.mjs';
import { lagProbe, projectionSeen } from './ledger-probes.mjs';
import { latencySummary } from './load.mjs';
import { waitFor } from './processes.mjs';

function tallyCli(args, env) {
  return new Promise((resolve, reject) =>
    execFile(
      process.execPath,
      [join(DIST, 'apps/cli/src/main.js'), ...args],
      { env: { ...process.env, ...env } },
      (error, stdout, stderr) =>
        error
          ? reject(new Error(`tally ${args.join(' ')}: ${error.message}\n${stdout}${stderr}`))
          : resolve(stdout),
    ),
  );
}

/** The projector run once (its namespace made active), stopped: the group exists, nothing to fold. */
export async function primeProjector(stack, settings, redis, log) {
  const projector = await startProjector(stack, settings, log);
  const namespaces = new (loadBuilt('libs/projections/src/index.js').ProjectionNamespaces)(redis);
  await waitFor('the projection namespace', async () => (await namespaces.active()) !== null, 60_000);
  await projector.stop();
}

/** A projector resuming at the newest offsets of the ledger topics; stop it with `.stop()`. */
export async function projectorAtLatest(stack, settings, log) {
  await tallyCli(['consumers', 'reset', '--to', 'latest'], appEnv(stack, settings));
  return startProjector(stack, settings, log);
}

/**
 * Marker decisions (`side.httpBody`) while `during()` runs the background load (and resolves to its
 * measurement); `redis`: Tally's Redis (the projection's). Returns p50/p90/p99/max ms, the markers
 * sent, arrived, lost, and what `during` measured.
 */
export async function projectionLag({ side, redis, during }) {
  const { ProjectionNamespaces } = loadBuilt('libs/projections/src/index.js');
  const namespaces = new ProjectionNamespaces(redis);
  const namespace = await namespaces.active();
  const probe = lagProbe({
    tenantPrefix: `lag-${Date.now()}-`,
    decide: async (tenant) => {
      const response = await fetch(side.httpUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...side.httpHeaders },
        body: side.httpBody(tenant),
      });
      return response.status === 200 && (await response.json()).allowed === true;
    },
    seen: projectionSeen(redis, namespaces, namespace),
  });
  const background = await during();
  const probed = await probe.stop();
  return {
    ...latencySummary(probed.lagsMs),
    markers: probed.sent,
    arrived: probed.arrived,
    lost: probed.lost,
    failed: probed.failed,
    background,
  };
}
