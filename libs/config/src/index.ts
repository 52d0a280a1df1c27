export { ConfigModule } from './config.module';
export { TALLY_CONFIG } from './config.constants';
export { ConfigError } from './config.error';
export { loadConfig } from './load-config';
export { TallyConfig, AUTH_MODES, LOG_LEVELS } from './tally.config';
export type { AuthMode, LogLevel } from './tally.config';
export type { RedisTarget } from './redis-target';
export type { HostPort } from './host-port';
export { durationMs } from './duration';
