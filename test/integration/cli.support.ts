/**
 * Shared by the cli*.test.ts suites: runCli in-process with the io captured. Suites that write
 * enforcement keys or projection namespaces run a PrivateRedis of @tally/testing, never the shared
 * Redis other suites and a running projector use.
 */
import { runCli } from '../../apps/cli/src/cli';

export interface CliRun {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** `tally <argv>` in-process, as `npm run -s tally` would run it, with the given environment. */
export async function tally(argv: readonly string[], env: NodeJS.ProcessEnv): Promise<CliRun> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runCli(argv, env, { stdout: (t) => out.push(t), stderr: (t) => err.push(t) });
  return { code, stdout: out.join('\n'), stderr: err.join('\n') };
}
