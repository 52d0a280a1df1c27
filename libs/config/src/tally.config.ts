import {
  ArrayNotEmpty,
  IsDefined,
  IsIn,
  IsInt,
  IsNumber,
  IsOptional,
  IsString,
  Max,
  MinLength,
  Min,
  ValidateBy,
  ValidateIf,
  ValidationOptions,
} from 'class-validator';
import { Env } from './env.decorator';
import { parseHostPort } from './host-port';
import { parseRedisTarget, RedisTarget } from './redis-target';

export const AUTH_MODES = ['bearer', 'none'] as const;
export const ON_OFF = ['on', 'off'] as const;
export const RELAY_COMPRESSIONS = ['none', 'gzip'] as const;
export type AuthMode = (typeof AUTH_MODES)[number];
export const LOG_LEVELS = ['debug', 'info', 'warn', 'error'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

const MIN_SECRET = 16;
const DAY_MS = 86_400_000;
/** Node timers overflow above 2^31 − 1 ms (they then fire at once): a connection timer stays below. */
const MAX_TIMER_MS = 24 * DAY_MS;

/** Same message on every constraint of a range, so one bad value yields one line. */
function IntIn(min: number, max: number, what = 'an integer'): PropertyDecorator {
  const message = `must be ${what} between ${min} and ${max}`;
  return (target, key) => {
    IsInt({ message })(target, key);
    Min(min, { message })(target, key);
    Max(max, { message })(target, key);
  };
}

function DurationIn(minMs: number, maxMs: number, range: string): PropertyDecorator {
  const message = `must be a duration like 500ms, 30s, 15m, 24h or 30d, between ${range}`;
  return (target, key) => {
    IsInt({ message })(target, key);
    Min(minMs, { message })(target, key);
    Max(maxMs, { message })(target, key);
  };
}

/** An absolute http(s) URL without credentials (a base the projector calls). */
function IsHttpUrl(): PropertyDecorator {
  return ValidateBy({
    name: 'isHttpUrl',
    validator: {
      validate: (v) => {
        if (typeof v !== 'string' || !URL.canParse(v)) return false;
        const url = new URL(v);
        return (
          (url.protocol === 'http:' || url.protocol === 'https:') &&
          url.username === '' &&
          url.password === ''
        );
      },
      defaultMessage: () => 'must be an http:// or https:// URL without credentials',
    },
  });
}

function IsRedisTarget(options: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'isRedisTarget',
      validator: { validate: (v) => typeof v === 'string' && parseRedisTarget(v) !== undefined },
    },
    options,
  );
}

function IsHostPortList(options: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'isHostPortList',
      validator: {
        validate: (v) =>
          Array.isArray(v) &&
          v.length > 0 &&
          v.every((i) => typeof i === 'string' && parseHostPort(i) !== undefined),
      },
    },
    options,
  );
}

function IsBindHost(options: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'isBindHost',
      validator: { validate: (v) => typeof v === 'string' && parseHostPort(v, 1) !== undefined },
    },
    options,
  );
}

/** The simple-form tokens are checked with bearer auth: required, unless a tokens file supplies tokens. */
const checksTokens = (c: TallyConfig, value: unknown): boolean =>
  c.auth !== 'none' && (c.tokensFile === undefined || value !== undefined);
const isSet = (_c: TallyConfig, value: unknown): boolean => value !== undefined;

/**
 * Every setting of Tally (DESIGN §7), typed. Built only by `loadConfig`, which reads the
 * environment, validates everything at once and freezes the result; nothing else reads `process.env`.
 */
export class TallyConfig {
  /** Redis: `redis://`, `rediss://`, `redis+cluster://h1:p1,h2:p2` or a `h1:p1,h2:p2` list. */
  @Env('REDIS_URL', { kind: 'string', default: 'redis://127.0.0.1:6379' })
  @IsRedisTarget({
    message:
      'must be redis://host:port, rediss://host:port, redis+cluster://h1:p1,h2:p2 or a list h1:p1,h2:p2',
  })
  readonly redisUrl!: string;

  /** Parsed form of `redisUrl`, filled in by `loadConfig` once it is valid. */
  readonly redis!: RedisTarget;

  /** Kafka bootstrap brokers. */
  @Env('KAFKA_BROKERS', { kind: 'list', default: '127.0.0.1:9092' })
  @IsHostPortList({ message: 'must be a comma-separated list of host:port' })
  readonly kafkaBrokers!: readonly string[];

  /** Path of the policy YAML file, relative to the working directory unless absolute. */
  @Env('TALLY_POLICIES', { kind: 'string', default: 'config/policies.yaml' })
  @IsString()
  readonly policiesPath!: string;

  /** Interface the servers bind to; containers set `0.0.0.0`, a bare host stays on loopback. */
  @Env('TALLY_HOST', { kind: 'string', default: '127.0.0.1' })
  @IsBindHost({ message: 'must be an IP address or a host name' })
  readonly host!: string;

  /** decision-api HTTP port. */
  @Env('TALLY_HTTP_PORT', { kind: 'int', default: '8080' })
  @IntIn(1, 65_535)
  readonly httpPort!: number;

  /** decision-api Envoy rate-limit gRPC port. */
  @Env('TALLY_GRPC_PORT', { kind: 'int', default: '8081' })
  @IntIn(1, 65_535)
  readonly grpcPort!: number;

  /** decision-api worker processes sharing its ports; `auto`: one per available core, `1`: a single process. */
  @Env('TALLY_WORKERS', { kind: 'int-or-auto', default: 'auto' })
  @ValidateIf((c: TallyConfig) => c.workers !== 'auto')
  @IntIn(1, 256, '"auto" or an integer')
  readonly workers!: number | 'auto';

  /** projector usage/audit query API port. */
  @Env('TALLY_PROJECTOR_PORT', { kind: 'int', default: '8082' })
  @IntIn(1, 65_535)
  readonly projectorPort!: number;

  /** relay health and metrics port. */
  @Env('TALLY_RELAY_PORT', { kind: 'int', default: '8083' })
  @IntIn(1, 65_535)
  readonly relayPort!: number;

  /** `bearer` checks tokens on every API; `none` turns authentication off (local experiments only). */
  @Env('TALLY_AUTH', { kind: 'string', default: 'bearer' })
  @IsIn(AUTH_MODES, { message: `must be one of ${AUTH_MODES.join(', ')}` })
  readonly auth!: AuthMode;

  /**
   * Caller tokens of the simple form: decide and query, on every tenant. Optional with a tokens file
   * (which can hold the same, scoped).
   */
  @Env('TALLY_API_TOKENS', { kind: 'list', secret: true })
  @ValidateIf(checksTokens)
  @IsDefined({
    message: `required unless TALLY_AUTH=none or TALLY_TOKENS_FILE is set (comma-separated, each at least ${MIN_SECRET} characters)`,
  })
  @ArrayNotEmpty({
    message: `required unless TALLY_AUTH=none or TALLY_TOKENS_FILE is set (comma-separated, each at least ${MIN_SECRET} characters)`,
  })
  @MinLength(MIN_SECRET, { each: true, message: `every token must be at least ${MIN_SECRET} characters` })
  readonly apiTokens?: readonly string[];

  /** Admin token of the simple form: control endpoints only (reloads, policy state). Never a caller token. */
  @Env('TALLY_ADMIN_TOKEN', { kind: 'string', secret: true })
  @ValidateIf(checksTokens)
  @IsDefined({
    message: `required unless TALLY_AUTH=none or TALLY_TOKENS_FILE is set (at least ${MIN_SECRET} characters)`,
  })
  @MinLength(MIN_SECRET, { message: `must be at least ${MIN_SECRET} characters` })
  readonly adminToken?: string;

  /**
   * Scoped tokens: a YAML or JSON file of SHA-256 digests with roles and tenant allow-lists, reloaded
   * live (file change, `POST /v1/tokens:reload`). Its entries add to the simple form's tokens.
   */
  @Env('TALLY_TOKENS_FILE', { kind: 'string' })
  @ValidateIf(isSet)
  @IsString()
  readonly tokensFile?: string;

  /** HMAC secret that replaces `token` selector values before they reach a key, log or event. */
  @Env('TALLY_TOKEN_SECRET', { kind: 'string', secret: true })
  @IsDefined({ message: `required (at least ${MIN_SECRET} characters)` })
  @MinLength(MIN_SECRET, { message: `must be at least ${MIN_SECRET} characters` })
  readonly tokenSecret!: string;

  /** Hash-tag shards of the Redis keys; changing it moves every key (needs a migration). */
  @Env('TALLY_SHARDS', { kind: 'int', default: '64' })
  @IntIn(1, 16_384)
  readonly shards!: number;

  /** Deadline of one Redis step on the hot path. */
  @Env('TALLY_BACKEND_TIMEOUT_MS', { kind: 'int', default: '100' })
  @IntIn(1, 60_000)
  readonly backendTimeoutMs!: number;

  /**
   * Durable mode: replicas that must acknowledge an allowed decision's writes before it is answered
   * (`WAIT`, pipelined with the script); fewer in time is a `backend_timeout`. 0 = off (async replication).
   */
  @Env('TALLY_REDIS_WAIT_REPLICAS', { kind: 'int', default: '0' })
  @IntIn(0, 16)
  readonly redisWaitReplicas!: number;

  /** Durable mode: how long Redis waits for those replicas (WAIT's timeout), on top of the step deadline. */
  @Env('TALLY_REDIS_WAIT_TIMEOUT_MS', { kind: 'int', default: '100' })
  @IntIn(1, 60_000)
  readonly redisWaitTimeoutMs!: number;

  /**
   * `local_fallback` policies while Redis fails: how many processes enforce at once, each allowing
   * ⌊limit / share⌋ per window; `auto`: this instance's worker count (TALLY_WORKERS). Set it to the
   * workers of every instance together when several instances share the traffic.
   */
  @Env('TALLY_LOCAL_FALLBACK_SHARE', { kind: 'int-or-auto', default: 'auto' })
  @ValidateIf((c: TallyConfig) => c.localFallbackShare !== 'auto')
  @IntIn(1, 100_000, '"auto" or an integer')
  readonly localFallbackShare!: number | 'auto';

  /** Keys (policy, tenant, key value) the local fallback limiter holds per process; beyond: the policy's overflow. */
  @Env('TALLY_LOCAL_FALLBACK_MAX_KEYS', { kind: 'int', default: '100000' })
  @IntIn(1, 10_000_000)
  readonly localFallbackMaxKeys!: number;

  /** How often each API process polls the shards' override versions for its copy (applied while Redis is down). */
  @Env('TALLY_OVERRIDE_CACHE_REFRESH_MS', { kind: 'int', default: '1000' })
  @IntIn(100, 60_000)
  readonly overrideCacheRefreshMs!: number;

  /** Overrides each API process holds in its copy (≈ 0.3 KB each); beyond, blocks first, the rest skipped and counted. */
  @Env('TALLY_OVERRIDE_CACHE_MAX_ENTRIES', { kind: 'int', default: '100000' })
  @IntIn(1, 10_000_000)
  readonly overrideCacheMaxEntries!: number;

  /**
   * The largest cost one decision may ask for, matched by a policy or not: above it 413
   * `cost.too_large`, nothing consumed (a policy's `max_cost` can only lower it). A million units is
   * a bulk charge for any unit a quota engine counts (requests, tokens, bytes in KiB), and it keeps
   * every projected sum exact: one usage bucket's 2^53 − 1 holds 9·10^9 maximal decisions.
   */
  @Env('TALLY_MAX_COST', { kind: 'int', default: '1000000' })
  @IntIn(1, 1_000_000_000_000)
  readonly maxCost!: number;

  /** How long an allowed decision is replayable by its idempotency key. */
  @Env('TALLY_IDEMPOTENCY_TTL', { kind: 'duration', default: '24h' })
  @DurationIn(1_000, 365 * DAY_MS, '1s and 365d')
  readonly idempotencyTtlMs!: number;

  /** How long projected audit entries are kept. */
  @Env('TALLY_AUDIT_RETENTION', { kind: 'duration', default: '30d' })
  @DurationIn(60_000, 3_650 * DAY_MS, '1m and 3650d')
  readonly auditRetentionMs!: number;

  /**
   * Redis cells one projector step writes at most (`StepWriter`). A step holds the Redis it runs on
   * for its whole run: larger steps aggregate more (higher throughput) but, on the Redis that also
   * answers decisions, delay them by up to a step (≈ 43 ms at the default on the ledger bench).
   */
  @Env('TALLY_PROJECTOR_STEP_CELLS', { kind: 'int', default: '12000' })
  @IntIn(100, 1_000_000)
  readonly projectorStepCells!: number;

  /**
   * Longest a projector fetch waits on the broker for `TALLY_PROJECTOR_FETCH_MIN_BYTES`; with little
   * traffic, part of the decision → projection lag.
   */
  @Env('TALLY_PROJECTOR_FETCH_WAIT', { kind: 'duration', default: '1s' })
  @DurationIn(1, 30_000, '1ms and 30s')
  readonly projectorFetchWaitMs!: number;

  /** Bytes a projector fetch waits for before the broker answers: fewer, larger fetches for up to the fetch wait of added lag. */
  @Env('TALLY_PROJECTOR_FETCH_MIN_BYTES', { kind: 'int', default: '1' })
  @IntIn(1, 16 * 1024 * 1024)
  readonly projectorFetchMinBytes!: number;

  /**
   * Kafka offset commits of the projector at most this often (visibility only: it resumes from Redis;
   * each commit is a broker write); 0 = one per Redis step.
   */
  @Env('TALLY_PROJECTOR_COMMIT_INTERVAL', { kind: 'duration', default: '1s' })
  @DurationIn(0, 60_000, '0ms and 60s')
  readonly projectorCommitIntervalMs!: number;

  /** How long an outbox entry stays pending with a relay before another relay re-claims it (a dead relay's work). */
  @Env('TALLY_RELAY_CLAIM_IDLE', { kind: 'duration', default: '30s' })
  @DurationIn(1_000, DAY_MS, '1s and 1d')
  readonly relayClaimIdleMs!: number;

  /**
   * How long the relay lets a batch collect entries after its first one before producing it (Kafka's
   * `linger.ms`): larger batches cost the relay, the broker and Redis less per decision, for at most
   * this much added decision → Kafka latency. 0 = produce whatever one read returns.
   */
  @Env('TALLY_RELAY_LINGER', { kind: 'duration', default: '50ms' })
  @DurationIn(0, 1_000, '0ms and 1s')
  readonly relayLingerMs!: number;

  /** Outbox entries per relay batch at most (one read, one produce, one acknowledgement); a full batch goes without lingering. */
  @Env('TALLY_RELAY_BATCH_SIZE', { kind: 'int', default: '1000' })
  @IntIn(1, 100_000)
  readonly relayBatchSize!: number;

  /** Compression of the relay's Kafka record batches: none or gzip (gzip saves bytes, not CPU, at these sizes). */
  @Env('TALLY_RELAY_COMPRESSION', { kind: 'string', default: 'none' })
  @IsIn(RELAY_COMPRESSIONS, { message: `must be one of ${RELAY_COMPRESSIONS.join(', ')}` })
  readonly relayCompression!: (typeof RELAY_COMPRESSIONS)[number];

  /**
   * Operator console (served by the projector at `/console`): the decision API's base URL, which the
   * projector proxies the console's policy calls to and samples `/metrics` and `/readyz` of; unset:
   * the console shows those parts as not configured.
   */
  @Env('TALLY_CONSOLE_DECISION_API_URL', { kind: 'string' })
  @ValidateIf(isSet)
  @IsHttpUrl()
  readonly consoleDecisionApiUrl?: string;

  /** Operator console: the relay's base URL (outbox depth and age from its `/metrics`, its `/readyz`); unset: not shown. */
  @Env('TALLY_CONSOLE_RELAY_URL', { kind: 'string' })
  @ValidateIf(isSet)
  @IsHttpUrl()
  readonly consoleRelayUrl?: string;

  /** Operator console: how often the projector samples the decision API's and relay's metrics (an hour of samples is kept). */
  @Env('TALLY_CONSOLE_SAMPLE_INTERVAL', { kind: 'duration', default: '10s' })
  @DurationIn(1_000, 300_000, '1s and 5m')
  readonly consoleSampleMs!: number;

  /** Operator console: the folder of its built assets; unset: `console/` of the build (`dist/console`). */
  @Env('TALLY_CONSOLE_DIR', { kind: 'string' })
  @ValidateIf(isSet)
  @IsString()
  readonly consoleDir?: string;

  /** Partitions of topics created at start (existing topics are only ever grown). */
  @Env('TALLY_TOPIC_PARTITIONS', { kind: 'int', default: '12' })
  @IntIn(1, 10_000)
  readonly topicPartitions!: number;

  /** Replication factor of topics created at start; `auto`: the broker count, at most 3 (then min.insync.replicas 2). */
  @Env('TALLY_TOPIC_REPLICATION', { kind: 'int-or-auto', default: 'auto' })
  @ValidateIf((c: TallyConfig) => c.topicReplication !== 'auto')
  @IntIn(1, 32, '"auto" or an integer')
  readonly topicReplication!: number | 'auto';

  /** Lowest level written by the structured logger. */
  @Env('TALLY_LOG_LEVEL', { kind: 'string', default: 'info' })
  @IsIn(LOG_LEVELS, { message: `must be one of ${LOG_LEVELS.join(', ')}` })
  readonly logLevel!: LogLevel;

  /** `on`: OpenTelemetry spans from the decision API through the relay to the projector (docs/operations.md). */
  @Env('TALLY_TRACING', { kind: 'string', default: 'off' })
  @IsIn(ON_OFF, { message: `must be one of ${ON_OFF.join(', ')}` })
  readonly tracing!: (typeof ON_OFF)[number];

  /** Share of new traces recorded (0..1); a caller's sampled or unsampled `traceparent` decides instead. */
  @Env('TALLY_TRACE_SAMPLE_RATIO', { kind: 'decimal', default: '0.01' })
  @IsNumber({}, { message: 'must be a number between 0 and 1' })
  @Min(0, { message: 'must be a number between 0 and 1' })
  @Max(1, { message: 'must be a number between 0 and 1' })
  readonly traceSampleRatio!: number;

  /** OTLP/HTTP collector base URL (the standard variable); spans go to `<url>/v1/traces`. */
  @Env('OTEL_EXPORTER_OTLP_ENDPOINT', { kind: 'string', default: 'http://127.0.0.1:4318' })
  @IsHttpUrl()
  readonly otlpEndpoint!: string;

  /** `service.name` of the spans (the standard variable); unset: `tally-<app>`, one per process kind. */
  @Env('OTEL_SERVICE_NAME', { kind: 'string' })
  @ValidateIf(isSet)
  @IsString()
  @MinLength(1)
  readonly otelServiceName?: string;

  /** Largest accepted HTTP request body. */
  @Env('TALLY_BODY_LIMIT_BYTES', { kind: 'int', default: '1048576' })
  @IntIn(1_024, 104_857_600)
  readonly bodyLimitBytes!: number;

  /** Requests in flight above which the API sheds load with 503 `server.overloaded` (gRPC: UNAVAILABLE). */
  @Env('TALLY_MAX_INFLIGHT', { kind: 'int', default: '2048' })
  @IntIn(1, 1_000_000)
  readonly maxInflight!: number;

  /**
   * Largest gRPC request message; larger is RESOURCE_EXHAUSTED before it is decoded. Envoy's
   * RateLimitRequest is a domain and a few descriptors of short entries (≈ 100 bytes each).
   */
  @Env('TALLY_GRPC_MAX_MESSAGE_BYTES', { kind: 'int', default: '65536' })
  @IntIn(1_024, 4_194_304)
  readonly grpcMaxMessageBytes!: number;

  /** Descriptors one `ShouldRateLimit` may carry (one per matching Envoy `rate_limits` entry). */
  @Env('TALLY_GRPC_MAX_DESCRIPTORS', { kind: 'int', default: '64' })
  @IntIn(1, 1_000)
  readonly grpcMaxDescriptors!: number;

  /**
   * `on`: `ShouldRateLimit` answers also carry `x-ratelimit-limit/-remaining/-reset`, the headers
   * envoyproxy/ratelimit adds with its response headers enabled, beside Tally's `ratelimit-*`.
   */
  @Env('TALLY_GRPC_X_RATELIMIT_HEADERS', { kind: 'string', default: 'off' })
  @IsIn(ON_OFF, { message: `must be one of ${ON_OFF.join(', ')}` })
  readonly grpcXRateLimitHeaders!: (typeof ON_OFF)[number];

  /** How long an admitted gRPC call may take to deliver its request message (a stalled sender holds a slot). */
  @Env('TALLY_GRPC_READ_TIMEOUT', { kind: 'duration', default: '10s' })
  @DurationIn(100, 600_000, '100ms and 10m')
  readonly grpcReadTimeoutMs!: number;

  /** gRPC server pings a connection after this long without frames, to find peers that vanished. */
  @Env('TALLY_GRPC_KEEPALIVE_TIME', { kind: 'duration', default: '5m' })
  @DurationIn(1_000, MAX_TIMER_MS, '1s and 24d')
  readonly grpcKeepaliveTimeMs!: number;

  /** A keepalive ping unanswered this long closes the connection. */
  @Env('TALLY_GRPC_KEEPALIVE_TIMEOUT', { kind: 'duration', default: '20s' })
  @DurationIn(1_000, 600_000, '1s and 10m')
  readonly grpcKeepaliveTimeoutMs!: number;

  /** A gRPC connection without calls for this long is closed (GOAWAY); clients reconnect on demand. */
  @Env('TALLY_GRPC_MAX_CONNECTION_IDLE', { kind: 'duration', default: '5m' })
  @DurationIn(1_000, MAX_TIMER_MS, '1s and 24d')
  readonly grpcMaxConnectionIdleMs!: number;

  /** Longest life of a gRPC connection (±10 %), so clients rebalance over replicas added later. */
  @Env('TALLY_GRPC_MAX_CONNECTION_AGE', { kind: 'duration', default: '30m' })
  @DurationIn(1_000, MAX_TIMER_MS, '1s and 24d')
  readonly grpcMaxConnectionAgeMs!: number;

  /** HTTP: a request's headers (a new connection's first request: from connecting) must arrive within this, else 408 and close. */
  @Env('TALLY_HEADERS_TIMEOUT_MS', { kind: 'int', default: '10000' })
  @IntIn(100, 600_000)
  readonly headersTimeoutMs!: number;

  /** HTTP: a whole request (headers and body) must arrive within this, else 408 and close. */
  @Env('TALLY_REQUEST_TIMEOUT_MS', { kind: 'int', default: '30000' })
  @IntIn(100, 3_600_000)
  readonly requestTimeoutMs!: number;

  /** HTTP: a kept-alive connection idle this long between requests is closed (so is one silent this long mid-request). */
  @Env('TALLY_IDLE_TIMEOUT_MS', { kind: 'int', default: '72000' })
  @IntIn(100, 3_600_000)
  readonly idleTimeoutMs!: number;

  /**
   * PEM certificate (chain) file: with `TALLY_TLS_KEY`, the HTTP and gRPC listeners serve TLS only;
   * neither = plaintext. Both or neither, readable and matching, checked by `loadConfig` (tls-files.ts).
   */
  @Env('TALLY_TLS_CERT', { kind: 'string' })
  @IsOptional()
  @IsString()
  readonly tlsCertPath?: string;

  /** PEM private key file of `TALLY_TLS_CERT`. */
  @Env('TALLY_TLS_KEY', { kind: 'string' })
  @IsOptional()
  @IsString()
  readonly tlsKeyPath?: string;
}
