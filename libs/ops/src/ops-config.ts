import { loadConfigFor, type RedisTarget } from '@tally/config';

/** What the `tally` commands need from the environment: where things are, and how keys are sharded. */
export interface OpsConfig {
  readonly redis: RedisTarget;
  readonly redisUrl: string;
  readonly kafkaBrokers: readonly string[];
  /** TALLY_SHARDS: reseed must build the same `{s<N>}` tags as the engine. */
  readonly shards: number;
  /** TALLY_POLICIES: the policy set in force (reseed counts only its windows). */
  readonly policiesPath: string;
  /** TALLY_AUDIT_RETENTION: a replay trims audit rows as the projector does. */
  readonly auditRetentionMs: number;
}

/** `--redis-url` / `--brokers` given on the command line win over REDIS_URL / KAFKA_BROKERS. */
export interface OpsOverrides {
  readonly redisUrl?: string;
  readonly brokers?: string;
}

/**
 * The CLI's view of the one validated configuration (@tally/config): the settings it reads are
 * checked exactly as the apps check them, so a typo in TALLY_* or a bad REDIS_URL is reported the same
 * way. The settings only the services read (tokens, the tokens file, the token secret, ports, TLS…)
 * are not the CLI's concern: it runs with the services' environment (their `.env`) whatever they hold.
 * @throws ConfigError listing every problem.
 */
export function loadOpsConfig(env: NodeJS.ProcessEnv, overrides: OpsOverrides = {}): OpsConfig {
  const effective: NodeJS.ProcessEnv = { ...env };
  if (overrides.redisUrl !== undefined) effective.REDIS_URL = overrides.redisUrl;
  if (overrides.brokers !== undefined) effective.KAFKA_BROKERS = overrides.brokers;
  return loadConfigFor(effective, [
    'redis',
    'redisUrl',
    'kafkaBrokers',
    'shards',
    'policiesPath',
    'auditRetentionMs',
  ]);
}
