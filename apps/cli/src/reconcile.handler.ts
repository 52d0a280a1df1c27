import {
  OpsError,
  reconcileEnforcement,
  reconcileNamespaces,
  type EnforcementReconcileResult,
} from '@tally/ops';
import { isGranularity } from '@tally/projections';
import type { ParsedArgs } from './cli-args';
import type { CliContext, CommandOutcome } from './cli-context';
import { table } from './output';

const NAMESPACE_PAIR_OPTIONS = ['from', 'to', 'granularity'] as const;
const ENFORCEMENT_OPTIONS = ['namespace', 'tenant', 'policy', 'policies', 'strict'] as const;

/**
 * `tally reconcile NS_A NS_B [--from --to --granularity]` or `tally reconcile --enforcement
 * [--namespace --tenant --policy --policies --strict]`; exit 1 when they differ.
 */
export async function reconcileCommand(args: ParsedArgs, ctx: CliContext): Promise<CommandOutcome> {
  const given = (names: readonly string[]) => names.filter((n) => n in args.options).map((n) => `--${n}`);
  if (args.options.enforcement === true) {
    if (args.positionals.NS_A !== undefined) {
      throw new OpsError(
        '--enforcement compares one namespace with the counters: give it as --namespace NS',
        true,
      );
    }
    const wrong = given(NAMESPACE_PAIR_OPTIONS);
    if (wrong.length > 0) throw new OpsError(`${wrong.join(', ')}: only when comparing two namespaces`, true);
    return enforcement(args, ctx);
  }
  const wrong = given(ENFORCEMENT_OPTIONS);
  if (wrong.length > 0) throw new OpsError(`${wrong.join(', ')}: only with --enforcement`, true);
  return namespaces(args, ctx);
}

async function namespaces(args: ParsedArgs, ctx: CliContext): Promise<CommandOutcome> {
  const a = args.positionals.NS_A;
  const b = args.positionals.NS_B;
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

async function enforcement(args: ParsedArgs, ctx: CliContext): Promise<CommandOutcome> {
  const config = ctx.config();
  const text = (name: string) =>
    typeof args.options[name] === 'string' ? String(args.options[name]) : undefined;
  const result = await reconcileEnforcement(ctx.redis(), {
    policiesFile: text('policies') ?? config.policiesPath,
    shards: config.shards,
    ...optional('namespace', text('namespace')),
    ...optional('tenant', text('tenant')),
    ...optional('policy', text('policy')),
  });
  const strict = args.options.strict === true;
  const failing = strict ? result.differences.length : result.unexplained;
  return { exitCode: failing > 0 ? 1 : 0, json: result, text: enforcementText(result, strict) };
}

function enforcementText(result: EnforcementReconcileResult, strict: boolean): string {
  const lines = [
    `${result.keys} key(s) of ${result.windows.length} window(s) compared between namespace ` +
      `${result.namespace} and the enforcement counters at ${result.now}`,
  ];
  for (const s of result.skipped) lines.push(`  not compared: ${s.policy}/${s.window}: ${s.reason}`);
  if (result.outboxPending > 0) {
    lines.push(
      `warning: ${result.outboxPending} decision(s) still in the outbox, counted but not yet in the ledger: ` +
        'run again once the relay and the projector have caught up',
    );
  }
  if (result.rolled > 0) {
    lines.push(
      `note: ${result.rolled} counter(s) moved to a new bucket while reading; run again to check them`,
    );
  }
  if (result.differences.length === 0) return [...lines, 'no differences'].join('\n');
  const rows = result.differences.map((d) => [
    d.tenant ?? '(none)',
    d.policy,
    d.window,
    d.key === '' ? '(all)' : d.key,
    d.bucket,
    d.projected,
    d.counter,
    d.difference > 0 ? `+${d.difference}` : String(d.difference),
    d.degraded,
    d.wouldDeny,
    d.explained ? 'explainable' : d.counter === null ? 'differs: no counter' : 'differs',
  ]);
  const explained = result.differences.length - result.unexplained;
  lines.push(
    table(
      [
        'TENANT',
        'POLICY',
        'WINDOW',
        'KEY',
        'BUCKET',
        'PROJECTED',
        'COUNTER',
        'DIFF',
        'DEGRADED',
        'WOULD-DENY',
        'NOTE',
      ],
      rows,
    ),
    '',
    `${result.differences.length} difference(s): ${result.unexplained} unexplained, ${explained} explainable by ` +
      `degraded or shadow would-deny decisions${strict && explained > 0 ? ' (counted: --strict)' : ''}`,
  );
  return lines.join('\n');
}

function optional<K extends string>(key: K, value: string | undefined): { [P in K]?: string } {
  return (value === undefined ? {} : { [key]: value }) as { [P in K]?: string };
}
