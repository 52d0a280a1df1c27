// The start-up the steady bench and the lag A/B bench share: the RLS configs written to `outDir`, a
// private stack (Redis + one Kafka broker, lib/stack.mjs), and Tally's side with its relay shipping
// to it (lib/rls-sides.mjs). Each start registers its teardown in `cleanup`, which the bench body may
// extend (more sides, a paused ledger to resume); once the body ends, however it ends, the teardowns
// run in reverse, each one even if another failed.
import { writeConfigs } from './rls-configs.mjs';
import { startTallySide } from './rls-sides.mjs';
import { startStack } from './stack.mjs';

/** Runs `body({ stack, tally, configs, cleanup })` on a fresh stack and Tally side; returns what it returns. */
export async function withTallyStack({ settings, outDir, log }, body) {
  const configs = writeConfigs(outDir);
  const cleanup = [];
  try {
    const stack = await startStack(log);
    cleanup.push(() => stack.down());
    const tally = await startTallySide({ stack, settings, configs, outDir, relay: true }, log, cleanup);
    return await body({ stack, tally, configs, cleanup });
  } finally {
    for (const step of cleanup.reverse())
      await Promise.resolve()
        .then(step)
        .catch((error) => log(`teardown: ${error instanceof Error ? error.message : error}`));
  }
}
