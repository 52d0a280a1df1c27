import { checkTokensFile, OpsError, tokenLine, tokenLineYaml } from '@tally/ops';
import type { ParsedArgs } from './cli-args';
import type { CliContext, CommandOutcome } from './cli-context';
import { invalidFileOutcome, table } from './output';

/**
 * `tally tokens hash [--name N --roles R,… [--tenants T,…]]`: reads one token on stdin (never from
 * an argument, which shells keep in their history and `ps` shows) and prints its SHA-256 digest, or a
 * whole tokens-file entry to paste.
 */
export async function tokensHash(args: ParsedArgs, ctx: CliContext): Promise<CommandOutcome> {
  if (!ctx.io.stdin) throw new OpsError('no stdin to read the token from', true);
  const list = (name: string) =>
    typeof args.options[name] === 'string'
      ? String(args.options[name])
          .split(',')
          .map((s) => s.trim())
      : undefined;
  const line = tokenLine(await ctx.io.stdin(), {
    ...(typeof args.options.name === 'string' ? { name: args.options.name } : {}),
    ...(list('roles') ? { roles: list('roles') } : {}),
    ...(list('tenants') ? { tenants: list('tenants') } : {}),
  });
  return { exitCode: 0, json: line, text: tokenLineYaml(line) };
}

/** `tally tokens check FILE`: every error with its path; exit 1 when invalid. */
export async function tokensCheck(args: ParsedArgs, _ctx: CliContext): Promise<CommandOutcome> {
  const result = await checkTokensFile(String(args.positionals.FILE));
  if (!result.ok) return invalidFileOutcome(result);
  const rows = result.tokens.map((t) => [
    t.name,
    t.roles.join(','),
    t.tenants?.join(',') ?? '(every tenant)',
  ]);
  const head = `${result.file}: valid, ${result.tokens.length} tokens (version ${result.version})`;
  return { exitCode: 0, json: result, text: `${head}\n${table(['TOKEN', 'ROLES', 'TENANTS'], rows)}` };
}
