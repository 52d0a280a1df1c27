export type LedgerLogLevel = 'nothing' | 'error' | 'warn' | 'info' | 'debug';

export interface LedgerLogEntry {
  readonly time: string;
  readonly level: Exclude<LedgerLogLevel, 'nothing'>;
  /** The client's own sub-system, e.g. `Consumer`, `Connection`. */
  readonly component: string;
  readonly message: string;
  readonly fields: Readonly<Record<string, unknown>>;
}

export type LedgerLogSink = (entry: LedgerLogEntry) => void;

/** Default sink: one JSON line per entry on stderr, so stdout stays free for CLI output. */
export const jsonLineLogSink: LedgerLogSink = (entry) => {
  const line = {
    time: entry.time,
    level: entry.level,
    logger: `kafka.${entry.component}`,
    msg: entry.message,
    ...entry.fields,
  };
  process.stderr.write(`${JSON.stringify(line)}\n`);
};
