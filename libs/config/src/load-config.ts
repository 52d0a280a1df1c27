import { validateSync, ValidationError } from 'class-validator';
import { ConfigError } from './config.error';
import { convert, EnvBinding, envBindings } from './env.decorator';
import { parseRedisTarget } from './redis-target';
import { TallyConfig } from './tally.config';
import { tlsProblems } from './tls-files';

/**
 * Reads the environment once, validates every setting and returns a frozen {@link TallyConfig}.
 * Blank variables count as unset (compose files often write `NAME=`). Throws {@link ConfigError}
 * listing every problem, including `TALLY_*` names it does not know (typos would otherwise be ignored).
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): TallyConfig {
  const { config, problems } = settle(env);
  if (problems.length > 0) throw new ConfigError(problems.map((p) => p.line));
  const redis = parseRedisTarget(config.redisUrl);
  return deepFreeze(Object.assign(config, { redis }));
}

/**
 * The settings a tool reads (the `tally` CLI: where Redis and Kafka are, the shards…), validated as
 * `loadConfig` validates them, from the same environment the services run with. A setting the tool
 * does not read is not its error: a problem is reported only when the setting it is reported against
 * is one of `used` (a rule between settings, such as "TALLY_TOKENS_FILE has no effect with
 * TALLY_AUTH=none", belongs to the services that read them). `TALLY_*` names no setting has are still
 * reported: a typo there may be a setting the tool reads, misspelled. `redis` comes with `redisUrl`.
 * @throws ConfigError listing every problem of the used settings.
 */
export function loadConfigFor<K extends keyof TallyConfig>(
  env: NodeJS.ProcessEnv,
  used: readonly K[],
): Readonly<Pick<TallyConfig, K>> {
  const wanted = new Set<string>(used);
  if (wanted.has('redis')) wanted.add('redisUrl');
  const { config, problems } = settle(env);
  const mine = problems.filter((p) => p.property === undefined || wanted.has(p.property));
  if (mine.length > 0) throw new ConfigError(mine.map((p) => p.line));
  const redis = wanted.has('redisUrl') ? parseRedisTarget(config.redisUrl) : undefined;
  const picked: Partial<Record<keyof TallyConfig, unknown>> = {};
  for (const property of used) picked[property] = property === 'redis' ? redis : config[property];
  return deepFreeze(picked as Pick<TallyConfig, K>);
}

/** One problem, and the property of the setting it is reported against (none: an unknown variable). */
interface Problem {
  readonly property: string | undefined;
  readonly line: string;
}

/** Every setting converted, and every problem, in the order `loadConfig` reports them. */
function settle(env: NodeJS.ProcessEnv): { config: TallyConfig; problems: Problem[] } {
  const bindings = envBindings(TallyConfig);
  const raw = new Map<string, string | undefined>();
  const values: Record<string, unknown> = {};
  for (const b of bindings) {
    const given = env[b.variable]?.trim();
    const value = given === undefined || given === '' ? b.default : given;
    raw.set(b.variable, value);
    values[b.property] = convert(b.kind, value);
  }
  const config = Object.assign(new TallyConfig(), values);

  const problems = validateSync(config).map((e) => describeError(e, bindings, raw));
  problems.sort((a, b) => a.order - b.order);
  const lines = problems.map((p) => p.line);
  if (config.httpPort === config.grpcPort && !lines.some((l) => /^TALLY_(HTTP|GRPC)_PORT:/.test(l))) {
    lines.push(
      `TALLY_GRPC_PORT: must differ from TALLY_HTTP_PORT, both serve in decision-api (got "${config.grpcPort}")`,
    );
  }
  lines.push(...tlsProblems(config.tlsCertPath, config.tlsKeyPath));
  lines.push(...tokenConflicts(config));
  lines.push(...crossChecks(config, lines));
  lines.push(...unknownVariables(env, bindings));
  // Every line opens with the variable it is reported against (`NAME: …`).
  const propertyOf = new Map(bindings.map((b) => [b.variable, b.property]));
  const against = (line: string) => propertyOf.get(line.slice(0, line.indexOf(':')));
  return { config, problems: lines.map((line) => ({ property: against(line), line })) };
}

function describeError(
  error: ValidationError,
  bindings: readonly EnvBinding[],
  raw: ReadonlyMap<string, string | undefined>,
): { order: number; line: string } {
  const order = bindings.findIndex((b) => b.property === error.property);
  const binding = bindings[order];
  const constraints = error.constraints ?? {};
  const value = raw.get(binding.variable);
  if (value === undefined && constraints.isDefined !== undefined) {
    return { order, line: `${binding.variable}: ${constraints.isDefined}` };
  }
  const messages = [
    ...new Set(
      Object.entries(constraints)
        .filter(([k]) => k !== 'isDefined')
        .map(([, m]) => m),
    ),
  ];
  return { order, line: `${binding.variable}: ${messages.join('; ')} (got ${shown(binding, value)})` };
}

/** Rules between settings, each reported only when the settings it relates are valid on their own. */
function crossChecks(config: TallyConfig, lines: readonly string[]): string[] {
  const bad = (variable: string): boolean => lines.some((l) => l.startsWith(`${variable}:`));
  const problems: string[] = [];
  if (
    !bad('TALLY_HEADERS_TIMEOUT_MS') &&
    !bad('TALLY_REQUEST_TIMEOUT_MS') &&
    config.headersTimeoutMs > config.requestTimeoutMs
  ) {
    problems.push(
      `TALLY_HEADERS_TIMEOUT_MS: must not exceed TALLY_REQUEST_TIMEOUT_MS (${config.requestTimeoutMs}), the headers are part of the request (got "${config.headersTimeoutMs}")`,
    );
  }
  return problems;
}

/** Secrets are described by their length, never echoed: error output ends up in logs. */
function shown(binding: EnvBinding, value: string | undefined): string {
  if (value === undefined) return 'nothing';
  if (!binding.secret) return JSON.stringify(value);
  if (binding.kind !== 'list') return `${value.length} characters`;
  const items = value
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  if (items.length === 0) return 'no tokens';
  return `${items.length} token${items.length === 1 ? '' : 's'} of ${items.map((s) => s.length).join(', ')} characters`;
}

/**
 * Token rules across settings. The admin token opens reloads and every tenant's counters: if it were
 * also a caller token, every service holding that token would hold the keys to the service.
 * (The tokens file is checked against both when it is read, at boot and on every reload.)
 */
function tokenConflicts(config: TallyConfig): string[] {
  const lines: string[] = [];
  if (config.auth === 'none' && config.tokensFile !== undefined)
    lines.push('TALLY_TOKENS_FILE: has no effect with TALLY_AUTH=none; unset one of them');
  const bearer = config.auth !== 'none';
  if (bearer && config.adminToken !== undefined && (config.apiTokens ?? []).includes(config.adminToken))
    lines.push(
      'TALLY_ADMIN_TOKEN: must differ from every TALLY_API_TOKENS token (an admin token is never a caller token)',
    );
  return lines;
}

/** Read by the project's scripts, not the apps (scripts/node-env.sh picks the Node version). */
const TOOLING_VARIABLES = ['TALLY_NODE_VERSION'];

function unknownVariables(env: NodeJS.ProcessEnv, bindings: readonly EnvBinding[]): string[] {
  const known = bindings.map((b) => b.variable).filter((v) => v.startsWith('TALLY_'));
  return Object.keys(env)
    .filter((name) => name.startsWith('TALLY_') && !known.includes(name) && !TOOLING_VARIABLES.includes(name))
    .sort()
    .map((name) => {
      const near = known.find((k) => editDistance(k, name) <= 2);
      return `${name}: unknown setting${near ? ` (did you mean ${near}?)` : ''}`;
    });
}

function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min(
        previous[j] + 1,
        current[j - 1] + 1,
        previous[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1),
      );
    }
    previous = current;
  }
  return previous[b.length];
}

function deepFreeze<T extends object>(value: T): T {
  for (const child of Object.values(value)) {
    if (child !== null && typeof child === 'object') deepFreeze(child as object);
  }
  return Object.freeze(value);
}
