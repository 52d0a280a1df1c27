import {
  dropNamespace,
  listNamespaces,
  OpsError,
  replay,
  replayWithWorkers,
  switchNamespace,
} from '@tally/ops';
import type { ParsedArgs } from './cli-args';
import type { CliContext, CommandOutcome } from './cli-context';
import { duration, rate, table } from './output';
import { forkedReplayWorkers } from './replay-worker.process';

/**
 * `tally replay --from --to --namespace [--force] [--workers N]`: rebuild projections into a fresh
 * namespace, in this process or in N forked worker processes.
 */
export async function replayCommand(args: ParsedArgs, ctx: CliContext): Promise<CommandOutcome> {
  const from = args.options.from as number | 'earliest';
  const to = args.options.to as number | 'latest';
  if (typeof from === 'number' && typeof to === 'number' && from >= to) {
    throw new OpsError('--from must be before --to', true);
  }
  const options = {
    namespace: String(args.options.namespace),
    from,
    to,
    force: args.options.force === true,
    auditRetentionMs: ctx.config().auditRetentionMs,
    onProgress: ctx.progress('replay'),
  };
  const deps = { ledger: ctx.ledger(), redis: ctx.redis() };
  const workers = typeof args.options.workers === 'number' ? args.options.workers : 1;
  const result =
    workers === 1
      ? { ...(await replay(deps, options)), workers: 1 }
      : await replayWithWorkers(deps, { ...options, workers }, forkedReplayWorkers(ctx));
  const text = [
    `replayed ${result.records} records from ${result.from} to ${result.to} into namespace ${result.namespace}`,
    `${result.applied} events applied, ${result.duplicates} duplicates skipped, ${result.invalid} invalid skipped, ` +
      `${result.refused} refused (a sum past 2^53 − 1 or a corrupt value; the projector dead-letters these)`,
    `${duration(result.elapsedMs)} at ${rate(result.perSecond)}` +
      (result.workers > 1 ? ` with ${result.workers} worker processes` : ''),
  ].join('\n');
  return { exitCode: 0, json: result, text };
}

/** `tally projections list`. */
export async function projectionsList(_args: ParsedArgs, ctx: CliContext): Promise<CommandOutcome> {
  const rows = await listNamespaces(ctx.redis());
  const text =
    rows.length === 0
      ? 'no projection namespaces'
      : table(
          ['NAMESPACE', 'ACTIVE', 'EVENTS', 'UPDATED', 'SHARDS', 'REPLAY'],
          rows.map((r) => [r.name, r.active ? '*' : '', r.events, r.updated, r.shards, r.replay ?? null]),
        );
  return { exitCode: 0, json: rows, text };
}

/** `tally projections switch NS [--force]`. */
export async function projectionsSwitch(args: ParsedArgs, ctx: CliContext): Promise<CommandOutcome> {
  const result = await switchNamespace(
    ctx.redis(),
    String(args.positionals.NAMESPACE),
    args.options.force === true,
  );
  const text = `active namespace: ${result.active} (was ${result.previous ?? 'none'}); queries and the projector follow within seconds`;
  return { exitCode: 0, json: result, text };
}

/** `tally projections drop NS`. */
export async function projectionsDrop(args: ParsedArgs, ctx: CliContext): Promise<CommandOutcome> {
  const name = String(args.positionals.NAMESPACE);
  const result = await dropNamespace(ctx.redis(), name);
  return { exitCode: 0, json: { name, ...result }, text: `dropped namespace ${name} (${result.keys} keys)` };
}
