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
