import { OpsError, simulate } from '@tally/ops';
import type { ParsedArgs } from './cli-args';
import type { CliContext, CommandOutcome } from './cli-context';
import { table } from './output';

/** `tally simulate --policies FILE --from T --to T [--tenant X]`: impact of proposed policies. */
export async function simulateCommand(args: ParsedArgs, ctx: CliContext): Promise<CommandOutcome> {
  const fromMs = args.options.from as number;
  const toMs = args.options.to as number;
  if (fromMs >= toMs) throw new OpsError('--from must be before --to', true);
  const result = await simulate(ctx.ledger(), {
    policiesFile: String(args.options.policies),
    fromMs,
    toMs,
    ...(typeof args.options.tenant === 'string' ? { tenant: args.options.tenant } : {}),
    ...(typeof args.options.overrides === 'string' ? { overridesFile: args.options.overrides } : {}),
    onProgress: ctx.progress('simulate'),
  });
  const rows = result.policies.map((p) => [
    p.policy,
    p.proposed ? (p.recorded ? 'both' : 'new') : 'removed',
    p.actual.applied,
    p.actual.allowed,
    p.actual.denied,
    p.simulated.applied,
    p.simulated.allowed,
    p.simulated.denied,
    signed(p.simulated.denied - p.actual.denied),
  ]);
  const text = [
    `${result.decisions} decisions from ${result.from} to ${result.to} under policy set ${result.policySetVersion}` +
      (result.invalid > 0 ? ` (${result.invalid} invalid records skipped)` : ''),
    table(['POLICY', 'IN', 'ACTUAL', 'ALLOWED', 'DENIED', 'PROPOSED', 'ALLOWED', 'DENIED', 'DENIED Δ'], rows),
    '',
    `actual:   ${result.actual.allowed} allowed, ${result.actual.denied} denied`,
    `proposed: ${result.simulated.allowed} allowed, ${result.simulated.denied} denied ` +
      `(${result.changed.allowedToDenied} allowed → denied, ${result.changed.deniedToAllowed} denied → allowed)`,
  ].join('\n');
  return { exitCode: 0, json: result, text };
}

function signed(n: number): string {
  return n > 0 ? `+${n}` : String(n);
}
