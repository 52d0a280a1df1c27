import { execFile } from 'node:child_process';
import { resolve } from 'node:path';
import { promisify } from 'node:util';

const ROOT = resolve(__dirname, '../../..');

/**
 * The path of a command-line tool a suite needs (promtool, chromium), installing its Debian package
 * with `docker/local/stack.sh tool` when it is missing: a fresh CI machine has neither, and a suite
 * that skipped itself there would prove nothing.
 */
export async function ensureTool(bin: string, debianPackage: string): Promise<string> {
  const { stdout } = await promisify(execFile)(
    'bash',
    [resolve(ROOT, 'docker/local/stack.sh'), 'tool', bin, debianPackage],
    {
      cwd: ROOT,
      timeout: 15 * 60_000,
    },
  );
  return stdout.trim();
}
