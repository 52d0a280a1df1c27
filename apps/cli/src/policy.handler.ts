import { checkPolicyFile } from '@tally/ops';
import type { ParsedArgs } from './cli-args';
import type { CliContext, CommandOutcome } from './cli-context';
import { table } from './output';

/** `tally policy check FILE`: every error with its path; exit 1 when invalid. */
export async function policyCheck(args: ParsedArgs, _ctx: CliContext): Promise<CommandOutcome> {
  const result = await checkPolicyFile(String(args.positionals.FILE));
  if (!result.ok) {
    const n = result.errors.length;
    const lines = result.errors.map((e) => `  ${e.path}: ${e.message}`);
    return {
      exitCode: 1,
      json: result,
      text: [`${result.file}: invalid, ${n} error${n === 1 ? '' : 's'}`, ...lines].join('\n'),
    };
  }
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
