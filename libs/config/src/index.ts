/**
 * @tally/config: every setting, read once from the environment at boot into one typed, validated
 * `TallyConfig` (`loadConfig`: all errors listed at once, a default and a one-line comment each);
 * the Redis target forms; and the one reader of configuration files (`parseYamlFile`, and
 * `ReloadableFile`: load, serialized reload, file watch), which the policy and token stores extend.
 *
 * Does NOT own:
 * - what a file means: the policy file's schema and rules (`@tally/policy`), the tokens file's
 *   (the HTTP auth of `@tally/http`); it reads, watches and reloads them;
 * - each lib's options object: apps build `EngineOptions`, `RelayOptions`, … from `TallyConfig`;
 * - opening connections: the Redis client (`@tally/redis`), the Kafka client (`@tally/ledger`);
 * - the CLI's `.env` handling and flags (apps/cli).
 */
export { ConfigModule } from './config.module';
export { TALLY_CONFIG } from './config.constants';
export { ConfigError } from './config.error';
export { loadConfig, loadConfigFor } from './load-config';
export { loadTlsFiles, type TlsFiles } from './tls-files';
export { TallyConfig, AUTH_MODES, LOG_LEVELS } from './tally.config';
export type { AuthMode, LogLevel } from './tally.config';
export type { RedisTarget } from './redis-target';
export type { HostPort } from './host-port';
export { durationMs } from './duration';
export { tracingSettings, type TracingSettings } from './tracing-settings';
export { flattenValidationErrors, parseYamlFile, sortByEntry, type FileProblem } from './config-file';
export {
  FileLoadError,
  ReloadableFile,
  type FileCompiler,
  type FileReloadListener,
  type FileReloadResult,
  type FileReloadTrigger,
  type ReloadableFileOptions,
} from './reloadable-file';
