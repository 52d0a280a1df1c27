import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseEnv } from 'node:util';

/**
 * The CLI's environment: `.env` in `dir` (the working directory) when present, under the process's
 * environment, so a variable set in the environment always wins over the file (as with
 * `node --env-file`). The file is parsed by Node's own `util.parseEnv` (`KEY=value`, quotes,
 * `#` comments); nothing is written to `process.env`. A missing file is the usual case; an unreadable
 * one is an error, since silently ignoring it would run against the wrong Redis or Kafka.
 */
export function withDotEnv(env: NodeJS.ProcessEnv, dir: string): NodeJS.ProcessEnv {
  let text: string;
  try {
    text = readFileSync(join(dir, '.env'), 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return env;
    throw new Error(`cannot read ${join(dir, '.env')}: ${(error as Error).message}`);
  }
  return { ...parseEnv(text), ...env };
}
