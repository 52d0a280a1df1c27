import { readFile } from 'node:fs/promises';
import { TallyClient, TallyRequestError, type TallyOverride } from '@tally/client';
import { OpsError } from '@tally/ops';
import type { ParsedArgs } from './cli-args';
import type { CliContext, CommandOutcome } from './cli-context';
import { table } from './output';

/**
 * `tally overrides list|get|set|rm`: the decision API's `/v1/overrides`, through the SDK. Wiring
 * only: the rules are the API's. The API is `--url` (default `http://127.0.0.1:<TALLY_HTTP_PORT or
 * 8080>`); the token is read from `--token-file`, else `TALLY_ADMIN_TOKEN` — never from an argument,
 * which shells keep in their history and `ps` shows.
 */

async function clientOf(args: ParsedArgs, ctx: CliContext): Promise<TallyClient> {
  const url = text(args, 'url') ?? `http://127.0.0.1:${ctx.env.TALLY_HTTP_PORT ?? '8080'}`;
  const file = text(args, 'token-file');
  const token = file !== undefined ? (await readFile(file, 'utf8')).trim() : ctx.env.TALLY_ADMIN_TOKEN;
  if (token === undefined || token === '')
    throw new OpsError('no token: give --token-file FILE or set TALLY_ADMIN_TOKEN', true);
  return new TallyClient({ baseUrl: url, token });
}

const text = (args: ParsedArgs, name: string): string | undefined =>
  typeof args.options[name] === 'string' ? String(args.options[name]) : undefined;
const scope = (args: ParsedArgs) => {
  const tenant = text(args, 'tenant');
  return tenant === undefined ? {} : { tenant };
};

/** Runs one call; the API's refusals become the command's failure, with every field error. */
async function withClient<T>(
  args: ParsedArgs,
  ctx: CliContext,
  call: (c: TallyClient) => Promise<T>,
): Promise<T> {
  const client = await clientOf(args, ctx);
  try {
    return await call(client);
  } catch (error) {
    if (!(error instanceof TallyRequestError)) throw new OpsError((error as Error).message);
    const fields = error.errors.map((e) => `\n  ${e.path}: ${e.message}`).join('');
    throw new OpsError(`${error.status} ${error.code}: ${error.message}${fields}`, error.status === 400);
  } finally {
    client.close();
  }
}

function rows(items: readonly TallyOverride[]): string {
  return table(
    ['POLICY', 'KEY', 'TENANT', 'LIMITS', 'EXPIRES', 'VERSION', 'SET BY', 'REASON'],
    items.map((o) => [
      o.policy,
      o.key,
      o.tenant,
      Object.entries(o.limits)
        .map(([w, l]) => `${w}=${l}`)
        .join(','),
      o.expires_at ?? '-',
      o.version,
      o.set_by,
      o.reason,
    ]),
  );
}

/** `tally overrides list [--policy P] [--tenant T]`: every page. */
export async function overridesList(args: ParsedArgs, ctx: CliContext): Promise<CommandOutcome> {
  const items = await withClient(args, ctx, async (client) => {
    const all: TallyOverride[] = [];
    let cursor: string | undefined;
    do {
      const page = await client.overrides.list({
        policy: text(args, 'policy'),
        tenant: text(args, 'tenant'),
        cursor,
        limit: 1000,
      });
      all.push(...page.items);
      cursor = page.next_cursor ?? undefined;
    } while (cursor !== undefined);
    return all;
  });
  return { exitCode: 0, json: { items }, text: items.length === 0 ? '(no overrides)' : rows(items) };
}

/** `tally overrides get POLICY KEY [--tenant T]`: exit 1 when none is in force. */
export async function overridesGet(args: ParsedArgs, ctx: CliContext): Promise<CommandOutcome> {
  const [policy, key] = [String(args.positionals.POLICY), String(args.positionals.KEY)];
  const found = await withClient(args, ctx, (c) => c.overrides.get(policy, key, scope(args)));
  if (found === null) return { exitCode: 1, json: null, text: `no override of ${policy} for ${key}` };
  return { exitCode: 0, json: found, text: rows([found]) };
}

/** `tally overrides set POLICY KEY --limits w=N,… --reason TEXT [--expires TIME] [--tenant T]`. */
export async function overridesSet(args: ParsedArgs, ctx: CliContext): Promise<CommandOutcome> {
  const [policy, key] = [String(args.positionals.POLICY), String(args.positionals.KEY)];
  const limits: Record<string, number> = {};
  for (const pair of String(args.options.limits).split(',')) {
    const m = /^\s*([^=\s]+)\s*=\s*(\d+)\s*$/.exec(pair);
    if (m === null) throw new OpsError(`--limits: "${pair}" is not WINDOW=N (N a whole number ≥ 0)`, true);
    limits[m[1]] = Number(m[2]);
  }
  const expires = args.options.expires;
  const change = {
    limits,
    reason: String(args.options.reason),
    ...(typeof expires === 'number' && { expires_at: new Date(expires).toISOString() }),
  };
  const stored = await withClient(args, ctx, (c) => c.overrides.set(policy, key, change, scope(args)));
  return { exitCode: 0, json: stored, text: rows([stored]) };
}

/** `tally overrides rm POLICY KEY [--tenant T]`: exit 1 when none was in force. */
export async function overridesRemove(args: ParsedArgs, ctx: CliContext): Promise<CommandOutcome> {
  const [policy, key] = [String(args.positionals.POLICY), String(args.positionals.KEY)];
  const removed = await withClient(args, ctx, (c) => c.overrides.remove(policy, key, scope(args)));
  return removed
    ? { exitCode: 0, json: { removed: true }, text: `removed the override of ${policy} for ${key}` }
    : { exitCode: 1, json: { removed: false }, text: `no override of ${policy} for ${key}` };
}
