import { loadConfig, type RedisTarget } from '@tally/config';

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
 * The CLI's view of the one validated configuration (@tally/config), so a typo in TALLY_* or a bad
 * REDIS_URL is reported exactly as the apps report it. The CLI authenticates nobody and hashes no
 * token (recorded selectors are already normalized), so the secrets the servers require are not
 * required here: auth is treated as off and a missing TALLY_TOKEN_SECRET gets an unused stand-in.
 * @throws ConfigError listing every problem.
 */
export function loadOpsConfig(env: NodeJS.ProcessEnv, overrides: OpsOverrides = {}): OpsConfig {
  const effective: NodeJS.ProcessEnv = {
    ...env,
    TALLY_AUTH: 'none',
    TALLY_TOKEN_SECRET: nonBlank(env.TALLY_TOKEN_SECRET) ?? 'cli-does-not-hash-tokens',
  };
  if (overrides.redisUrl !== undefined) effective.REDIS_URL = overrides.redisUrl;
  if (overrides.brokers !== undefined) effective.KAFKA_BROKERS = overrides.brokers;
  const config = loadConfig(effective);
  return {
    redis: config.redis,
    redisUrl: config.redisUrl,
    kafkaBrokers: config.kafkaBrokers,
    shards: config.shards,
    policiesPath: config.policiesPath,
    auditRetentionMs: config.auditRetentionMs,
  };
}

function nonBlank(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === '' ? undefined : value;
}
