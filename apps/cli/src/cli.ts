import { ConfigError } from '@tally/config';
import { OpsError } from '@tally/ops';
import { findCommand, parseArgs } from './cli-args';
import { commandHelp, usageText } from './cli-help';
import { CliContext, type CliIo } from './cli-context';
import { COMMANDS } from './commands';
import { packageVersion } from './package-version';

/**
 * One run of `tally`: parse, run, print, and the exit code (0 ok, 1 differences or failures,
 * 2 bad arguments). Errors are one clear line on stderr, never a stack trace.
 */
export async function runCli(
  argv: readonly string[],
  env: NodeJS.ProcessEnv,
  io: CliIo,
  nowMs = Date.now(),
): Promise<number> {
  if (argv.length === 0) {
    io.stderr(usageText(COMMANDS));
    return 2;
  }
  if (argv[0] === '--version') {
    io.stdout(packageVersion());
    return 0;
  }
  if (argv[0] === 'help' || argv.includes('--help') || argv.includes('-h')) {
    return help(argv.filter((a) => !a.startsWith('-')).slice(argv[0] === 'help' ? 1 : 0), io);
  }
  const parsed = parseArgs(argv, COMMANDS, nowMs);
  if (!parsed.ok) {
    io.stderr(parsed.message);
    return 2;
  }
  const { args } = parsed;
  const command = COMMANDS.find((c) => c === args.command) ?? COMMANDS[0];
  const name = `tally ${command.path.join(' ')}`;
  const overrides = {
    ...(typeof args.options['redis-url'] === 'string' ? { redisUrl: args.options['redis-url'] } : {}),
    ...(typeof args.options.brokers === 'string' ? { brokers: args.options.brokers } : {}),
  };
  const ctx = new CliContext(env, overrides, io, nowMs);
  try {
    const outcome = await command.run(args, ctx);
    if (args.options.json === true) io.stdout(JSON.stringify(outcome.json, null, 2));
    // A command that streamed its output (bench) has nothing left to print.
    else if (outcome.text !== '') io.stdout(outcome.text);
    return outcome.exitCode;
  } catch (error) {
    if (error instanceof ConfigError) {
      io.stderr(`${name}: configuration: ${error.message}`);
      return 2;
    }
    if (error instanceof OpsError) {
      io.stderr(`${name}: ${error.message}`);
      return error.usage ? 2 : 1;
    }
    io.stderr(`${name}: failed: ${(error as Error).message}`);
    return 1;
  } finally {
    await ctx.close();
  }
}

/**
 * `tally help [command]`, `tally <command> --help`: the list, one command in detail, or every command
 * of a family (`tally consumers --help`). Help wins over every other argument and needs no config.
 */
function help(words: readonly string[], io: CliIo): number {
  if (words.length === 0) {
    io.stdout(usageText(COMMANDS));
    return 0;
  }
  const found = findCommand(words, COMMANDS);
  if ('spec' in found) {
    io.stdout(commandHelp(found.spec));
    return 0;
  }
  const family = COMMANDS.filter((c) => c.path.length > 1 && c.path[0] === words[0]);
  if (words.length === 1 && family.length > 0) {
    io.stdout(family.map(commandHelp).join('\n\n'));
    return 0;
  }
  io.stderr(found.message);
  return 2;
}
