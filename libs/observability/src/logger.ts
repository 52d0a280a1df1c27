import { ConsoleLogger, type LogLevel } from '@nestjs/common';

const LEVELS: Record<string, LogLevel[]> = {
  debug: ['fatal', 'error', 'warn', 'log', 'debug'],
  info: ['fatal', 'error', 'warn', 'log'],
  warn: ['fatal', 'error', 'warn'],
  error: ['fatal', 'error'],
};

/** Structured JSON log lines (one object per line) on stdout, for every app. */
export function createLogger(app: string, level: string): ConsoleLogger {
  return new ConsoleLogger(app, { json: true, logLevels: LEVELS[level] ?? LEVELS.info, colors: false });
}
