import {
  dropNamespace,
  listNamespaces,
  OpsError,
  reconcileNamespaces,
  replay,
  switchNamespace,
} from '@tally/ops';
import { isGranularity } from '@tally/projections';
import type { ParsedArgs } from './cli-args';
import type { CliContext, CommandOutcome } from './cli-context';
import { duration, rate, table } from './output';

/** `tally replay --from --to --namespace [--force]`: rebuild projections into a fresh namespace. */
export async function replayCommand(args: ParsedArgs, ctx: CliContext): Promise<CommandOutcome> {
  const from = args.options.from as number | 'earliest';
  const to = args.options.to as number | 'latest';
  if (typeof from === 'number' && typeof to === 'number' && from >= to) {
    throw new OpsError('--from must be before --to', true);
  }
  const result = await replay(
    { ledger: ctx.ledger(), redis: ctx.redis() },
    {
      namespace: String(args.options.namespace),
      from,
      to,
      force: args.options.force === true,
      auditRetentionMs: ctx.config().auditRetentionMs,
      onProgress: ctx.progress('replay'),
    },
  );
  const text = [
    `replayed ${result.records} records from ${result.from} to ${result.to} into namespace ${result.namespace}`,
    `${result.applied} events applied, ${result.duplicates} duplicates skipped, ${result.invalid} invalid skipped`,
    `${duration(result.elapsedMs)} at ${rate(result.perSecond)}`,
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
          ['NAMESPACE', 'ACTIVE', 'EVENTS', 'UPDATED', 'REPLAY'],
          rows.map((r) => [r.name, r.active ? '*' : '', r.events, r.updated, r.replay ?? null]),
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

/** `tally reconcile NS_A NS_B [--from --to --granularity]`; exit 1 when they differ. */
export async function reconcileCommand(args: ParsedArgs, ctx: CliContext): Promise<CommandOutcome> {
  const a = args.positionals.NS_A;
  const b = args.positionals.NS_B;
  if (args.options.enforcement === true) {
    throw new OpsError(
      '--enforcement is not available yet: compare two namespaces (tally reconcile NS_A NS_B)',
      true,
    );
  }
  if (typeof a !== 'string' || typeof b !== 'string')
    throw new OpsError('give two namespaces, or --enforcement', true);
  const granularity = args.options.granularity;
  if (granularity !== undefined && !isGranularity(granularity)) {
    throw new OpsError(
      `--granularity: ${JSON.stringify(granularity)} is not minute, hour, day or month`,
      true,
    );
  }
  const result = await reconcileNamespaces(ctx.redis(), {
    a,
    b,
    ...(typeof args.options.from === 'number' ? { fromMs: args.options.from } : {}),
    ...(typeof args.options.to === 'number' ? { toMs: args.options.to } : {}),
    ...(isGranularity(granularity) ? { granularity } : {}),
  });
  const range = `${result.from ?? 'the beginning'} to ${result.to ?? 'the end'}`;
  const head = `${result.cells} usage cells compared between ${a} and ${b}, buckets from ${range}`;
  if (result.differences.length === 0) return { exitCode: 0, json: result, text: `${head}: no differences` };
  const rows = result.differences.map((d) => [
    d.cell.tenant ?? '(none)',
    d.cell.policy,
    d.cell.granularity,
    new Date(d.cell.start).toISOString(),
    d.a.cost,
    d.b.cost,
    d.a.count,
    d.b.count,
  ]);
  const text = [
    `${head}: ${result.differences.length} difference(s)`,
    table(
      ['TENANT', 'POLICY', 'GRANULARITY', 'BUCKET', `COST ${a}`, `COST ${b}`, `COUNT ${a}`, `COUNT ${b}`],
      rows,
    ),
  ].join('\n');
  return { exitCode: 1, json: result, text };
}
