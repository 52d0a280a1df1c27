import { ConfigError } from '@tally/config';
import { OpsError } from '@tally/ops';
import { parseArgs, usageText } from './cli-args';
import { CliContext, type CliIo } from './cli-context';
import { COMMANDS } from './commands';

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
  if (argv.length === 0 || argv[0] === 'help' || argv[0] === '--help' || argv[0] === '-h') {
    if (argv.length === 0) {
      io.stderr(usageText(COMMANDS));
      return 2;
    }
    io.stdout(usageText(COMMANDS));
    return 0;
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
