import { type CommandSpec, GLOBAL_OPTIONS, type OptionSpec, TIME_HELP } from './cli-args';

/** Exit codes every command shares; exit 1 is each command's own (`CommandSpec.exit1`). */
const EXIT_0 = 'success';
const EXIT_2 =
  'bad arguments or configuration: unknown option, missing or invalid value, invalid setting (nothing was done)';

/** Arguments as the usage line writes them: `FILE`, `[NS_A]`, `--to TIME`, `[--force]`. */
export function usageArgs(c: CommandSpec): string[] {
  return [
    ...c.positionals.map((p) => {
      const name = p.choices === undefined ? p.name : p.choices.join('|');
      return p.optional === true ? `[${name}]` : name;
    }),
    ...c.options.map((o) => {
      const text = optionText(o);
      return o.required === true ? text : `[${text}]`;
    }),
  ];
}

/**
 * `tally <command> --help`: usage, what it does, its arguments and options (the global ones too) and
 * what each exit code means for it. Read from the same spec the parser uses, so it cannot drift.
 */
export function commandHelp(c: CommandSpec): string {
  const name = `tally ${c.path.join(' ')}`;
  const lines = [`usage: ${[name, ...usageArgs(c), '[--json]'].join(' ')}`, '', c.summary];
  if (c.positionals.length > 0) {
    lines.push('', 'arguments:');
    for (const p of c.positionals) {
      const values = p.choices === undefined ? '' : ` (one of ${p.choices.join(', ')})`;
      lines.push(`  ${p.name}${p.optional === true ? ' (optional)' : ''}${values}`);
    }
  }
  lines.push('', 'options:');
  const options = [...c.options, ...GLOBAL_OPTIONS, { name: 'help', help: 'print this help' }];
  const width = Math.max(...options.map((o) => optionText(o).length));
  for (const o of options) {
    const required = o.required === true ? ' (required)' : '';
    lines.push(`  ${optionText(o).padEnd(width)}  ${o.help}${required}`);
  }
  if (c.options.some((o) => ['time', 'start', 'end', 'reset'].includes(o.value ?? ''))) {
    lines.push('', `times: ${TIME_HELP}`);
  }
  lines.push('', 'exit codes:', `  0  ${EXIT_0}`, `  1  ${c.exit1}`, `  2  ${EXIT_2}`);
  return lines.join('\n');
}

/** `tally help`: every command with its options. */
export function usageText(commands: readonly CommandSpec[]): string {
  const lines = ['usage: tally <command> [arguments] [--json] [--redis-url URL] [--brokers LIST]', ''];
  for (const c of commands)
    lines.push(`  tally ${[...c.path, ...usageArgs(c)].join(' ')}`, `      ${c.summary}`);
  lines.push(
    '',
    `times: ${TIME_HELP}`,
    'exit codes: 0 ok, 1 differences or failures, 2 bad arguments',
    'tally <command> --help: one command in detail; tally --version: the version',
  );
  return lines.join('\n');
}

function optionText(o: OptionSpec): string {
  return o.value === undefined ? `--${o.name}` : `--${o.name} ${o.placeholder ?? 'VALUE'}`;
}
