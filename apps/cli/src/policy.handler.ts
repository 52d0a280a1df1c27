import { checkPolicyFile } from '@tally/ops';
import type { ParsedArgs } from './cli-args';
import type { CliContext, CommandOutcome } from './cli-context';
import { invalidFileOutcome, table } from './output';

/** `tally policy check FILE`: every error with its path; exit 1 when invalid. */
export async function policyCheck(args: ParsedArgs, _ctx: CliContext): Promise<CommandOutcome> {
  const result = await checkPolicyFile(String(args.positionals.FILE));
  if (!result.ok) return invalidFileOutcome(result);
  const rows = result.policies.map((p) => [
    p.name,
    p.mode,
    p.enabled ? 'yes' : 'no',
    p.key.join(',') || '-',
    p.windows.join('; '),
    p.group ?? null,
  ]);
  const head = `${result.file}: valid, ${result.policies.length} policies (version ${result.version})`;
  return {
    exitCode: 0,
    json: result,
    text: `${head}\n${table(['POLICY', 'MODE', 'ENABLED', 'KEY', 'WINDOWS', 'GROUP'], rows)}`,
  };
}
