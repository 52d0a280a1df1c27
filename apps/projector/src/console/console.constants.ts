/** The console's own Redis connection (consumer status reads the projector's stored offsets). */
export const CONSOLE_REDIS = Symbol('CONSOLE_REDIS');
/** The console's settings, from `TallyConfig`. */
export const CONSOLE_OPTIONS = Symbol('CONSOLE_OPTIONS');

export interface ConsoleOptions {
  readonly decisionApiUrl?: string;
  readonly relayUrl?: string;
  readonly sampleMs: number;
  /** Folder of the built assets (`index.html`, `*.js`, `*.css`). */
  readonly assetsDir: string;
}
