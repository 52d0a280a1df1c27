import { ProjectionNamespaces } from '@tally/projections';
import { parseTimeArg } from './time-arg';

/** How a value on the command line is read. */
export type ValueKind = 'text' | 'time' | 'start' | 'end' | 'reset' | 'namespace' | 'workers';

/** Worker processes a replay may fork: more than the cores of a big machine is a typo. */
export const MAX_WORKERS = 64;
export type ArgValue = string | number | boolean;

export interface OptionSpec {
  readonly name: string;
  /** Absent: a flag without a value. */
  readonly value?: ValueKind;
  readonly placeholder?: string;
  readonly required?: boolean;
  readonly help: string;
}

export interface PositionalSpec {
  readonly name: string;
  readonly value: ValueKind;
  readonly optional?: boolean;
  /** The only accepted values (with `text`). */
  readonly choices?: readonly string[];
}

export interface CommandSpec {
  /** `['consumers', 'status']` */
  readonly path: readonly string[];
  readonly positionals: readonly PositionalSpec[];
  readonly options: readonly OptionSpec[];
  readonly summary: string;
  /** What exit code 1 means for this command (`tally <command> --help` prints it). */
  readonly exit1: string;
}

export interface ParsedArgs {
  readonly command: CommandSpec;
  readonly positionals: Readonly<Record<string, ArgValue>>;
  readonly options: Readonly<Record<string, ArgValue>>;
}

export type ParseResult = { ok: true; args: ParsedArgs } | { ok: false; message: string };

/** Options every command takes. */
export const GLOBAL_OPTIONS: readonly OptionSpec[] = [
  { name: 'json', help: 'print JSON for scripts instead of tables' },
  { name: 'redis-url', value: 'text', placeholder: 'URL', help: 'Redis (overrides REDIS_URL)' },
  { name: 'brokers', value: 'text', placeholder: 'LIST', help: 'Kafka brokers (overrides KAFKA_BROKERS)' },
];

export const TIME_HELP = 'ISO 8601 like 2026-11-30T09:00:00Z, a date, now, or now-1h';

/** Reads one value; a message (without the command prefix) when it is not acceptable. */
function convert(kind: ValueKind, raw: string, nowMs: number): { value: ArgValue } | { problem: string } {
  const time = (extra: string, special?: string) => {
    if (special !== undefined && raw === special) return { value: raw };
    const ms = parseTimeArg(raw, nowMs);
    return ms === undefined
      ? { problem: `${JSON.stringify(raw)} is not a time (use ${TIME_HELP}${extra})` }
      : { value: ms };
  };
  switch (kind) {
    case 'text':
      return raw === '' ? { problem: 'must not be empty' } : { value: raw };
    case 'time':
      return time('');
    case 'start':
      return time(', or earliest', 'earliest');
    case 'end':
      return time(', or latest', 'latest');
    case 'reset':
      if (raw === 'latest') return { value: raw };
      return time(', earliest or latest', 'earliest');
    case 'namespace':
      return ProjectionNamespaces.isValidName(raw)
        ? { value: raw }
        : { problem: `${JSON.stringify(raw)} is not a valid namespace ([a-z0-9][a-z0-9_-]{0,62})` };
    case 'workers':
      return /^[1-9]\d{0,1}$/.test(raw) && Number(raw) <= MAX_WORKERS
        ? { value: Number(raw) }
        : { problem: `${JSON.stringify(raw)} is not a number of workers from 1 to ${MAX_WORKERS}` };
  }
}

/**
 * A deliberately small parser (no dependency): `tally <command…> [positionals] [--opt value |
 * --opt=value | --flag]`. Every problem is one line naming the command, so a script's log says
 * exactly what to fix; the caller exits 2 with it.
 */
export function parseArgs(
  argv: readonly string[],
  commands: readonly CommandSpec[],
  nowMs: number,
): ParseResult {
  const words: string[] = [];
  let i = 0;
  while (i < argv.length && !argv[i].startsWith('-')) words.push(argv[i++]);
  const command = findCommand(words, commands);
  if ('message' in command) return { ok: false, message: command.message };
  const spec = command.spec;
  const prefix = `tally ${spec.path.join(' ')}`;
  const fail = (message: string): ParseResult => ({ ok: false, message: `${prefix}: ${message}` });
  const rest = [...words.slice(spec.path.length), ...argv.slice(i)];

  const known = [...spec.options, ...GLOBAL_OPTIONS];
  const options: Record<string, ArgValue> = {};
  const given: string[] = [];
  for (let j = 0; j < rest.length; j++) {
    const word = rest[j];
    if (!word.startsWith('--') || word === '--') {
      given.push(word);
      continue;
    }
    const eq = word.indexOf('=');
    const name = word.slice(2, eq < 0 ? undefined : eq);
    const option = known.find((o) => o.name === name);
    if (option === undefined) return fail(`unknown option --${name}`);
    if (name in options) return fail(`--${name} given twice`);
    if (option.value === undefined) {
      if (eq >= 0) return fail(`--${name} takes no value`);
      options[name] = true;
      continue;
    }
    const raw = eq >= 0 ? word.slice(eq + 1) : rest[j + 1];
    if (raw === undefined || (eq < 0 && raw.startsWith('--'))) return fail(`--${name} needs a value`);
    if (eq < 0) j++;
    const converted = convert(option.value, raw, nowMs);
    if ('problem' in converted) return fail(`--${name}: ${converted.problem}`);
    options[name] = converted.value;
  }
  for (const option of spec.options) {
    if (option.required === true && !(option.name in options)) return fail(`--${option.name} is required`);
  }

  const positionals: Record<string, ArgValue> = {};
  for (const [k, p] of spec.positionals.entries()) {
    const raw = given[k];
    if (raw === undefined) {
      if (p.optional === true) continue;
      return fail(`missing ${p.name}`);
    }
    if (raw.startsWith('-')) return fail(`unknown option ${raw}`);
    if (p.choices !== undefined && !p.choices.includes(raw)) {
      return fail(`${p.name}: ${JSON.stringify(raw)} is not ${oneOf(p.choices)}`);
    }
    const converted = convert(p.value, raw, nowMs);
    if ('problem' in converted) return fail(`${p.name}: ${converted.problem}`);
    positionals[p.name] = converted.value;
  }
  const extra = given[spec.positionals.length];
  if (extra !== undefined) {
    return fail(
      extra.startsWith('-') ? `unknown option ${extra}` : `unexpected argument ${JSON.stringify(extra)}`,
    );
  }
  return { ok: true, args: { command: spec, positionals, options } };
}

/** `a`, `a or b`, `a, b or c`. */
function oneOf(choices: readonly string[]): string {
  return choices.length < 2
    ? (choices[0] ?? '')
    : `${choices.slice(0, -1).join(', ')} or ${choices[choices.length - 1]}`;
}

export function findCommand(
  words: readonly string[],
  commands: readonly CommandSpec[],
): { spec: CommandSpec } | { message: string } {
  if (words.length === 0) return { message: 'tally: missing command; run "tally help" for the list' };
  const matches = commands
    .filter((c) => c.path.every((part, k) => words[k] === part))
    .sort((a, b) => b.path.length - a.path.length);
  if (matches.length > 0) return { spec: matches[0] };
  const family = commands.filter((c) => c.path[0] === words[0] && c.path.length > 1);
  if (family.length > 0) {
    const subs = family.map((c) => c.path[1]).join(', ');
    return words.length === 1
      ? { message: `tally ${words[0]}: missing subcommand (${subs})` }
      : { message: `tally ${words[0]}: unknown subcommand ${JSON.stringify(words[1])} (${subs})` };
  }
  return { message: `tally: unknown command ${JSON.stringify(words[0])}; run "tally help" for the list` };
}
