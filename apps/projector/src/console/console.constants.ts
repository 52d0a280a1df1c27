import type { RedisConnection } from '@tally/redis';

/** The console's settings, from `TallyConfig`. */
export const CONSOLE_OPTIONS = Symbol('CONSOLE_OPTIONS');

export interface ConsoleOptions {
  readonly decisionApiUrl?: string;
  readonly relayUrl?: string;
  readonly sampleMs: number;
  /** Folder of the built assets (`index.html`, `*.js`, `*.css`). */
  readonly assetsDir: string;
  /** Where the projector's stored offsets are (the console's own connection, `ConsoleRedis`). */
  readonly redis: RedisConnection;
}
