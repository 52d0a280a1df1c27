import { reseed } from '@tally/ops';
import type { ParsedArgs } from './cli-args';
import type { CliContext, CommandOutcome } from './cli-context';
import { table } from './output';

/** `tally reseed [--policy P] [--from T] [--policies FILE]`: sustained counters from the ledger. */
export async function reseedCommand(args: ParsedArgs, ctx: CliContext): Promise<CommandOutcome> {
  const config = ctx.config();
  const result = await reseed(
    { ledger: ctx.ledger(), redis: ctx.redis() },
    {
      policiesFile: typeof args.options.policies === 'string' ? args.options.policies : config.policiesPath,
      shards: config.shards,
      ...(typeof args.options.policy === 'string' ? { policy: args.options.policy } : {}),
      ...(typeof args.options.from === 'number' ? { fromMs: args.options.from } : {}),
      onProgress: ctx.progress('reseed'),
    },
  );
  const windows = result.windows.map((w) => [
    w.policy,
    w.window,
    w.algorithm,
    w.since,
    w.partial ? 'partial' : 'full',
  ]);
  const lines = [
    `read ${result.recordsRead} usage records from ${result.from}; ${result.eventsCounted} counted` +
      (result.invalid > 0 ? ` (${result.invalid} invalid skipped)` : ''),
    result.windows.length === 0
      ? 'no sustained window (≥ 1h fixed or sliding, or calendar month) to rebuild'
      : table(['POLICY', 'WINDOW', 'ALGORITHM', 'SINCE', 'LEDGER'], windows),
    '',
    `${result.raised} counter(s) raised, ${result.unchanged} already at or above the ledger (never lowered)`,
  ];
  return { exitCode: 0, json: result, text: lines.join('\n') };
}
