import { describe, expect, it } from 'vitest';
import { ConfigError } from './config.error';
import { loadConfig, loadConfigFor } from './load-config';
import { TallyConfig } from './tally.config';

const SECRETS = {
  TALLY_API_TOKENS: 'caller-token-0000001,caller-token-0000002',
  TALLY_ADMIN_TOKEN: 'admin-token-00000001',
  TALLY_TOKEN_SECRET: 'hmac-secret-00000001',
};

function problemsOf(env: NodeJS.ProcessEnv): readonly string[] {
  try {
    loadConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  throw new Error('expected a ConfigError');
}

describe(loadConfig.name, () => {
  it('applies every default when only the secrets are given', () => {
    const sut = loadConfig({ ...SECRETS, PATH: '/usr/bin' });

    expect(sut).toBeInstanceOf(TallyConfig);
    expect({ ...sut }).toEqual({
      redisUrl: 'redis://127.0.0.1:6379',
      redis: { mode: 'single', url: 'redis://127.0.0.1:6379' },
      kafkaBrokers: ['127.0.0.1:9092'],
      policiesPath: 'config/policies.yaml',
      host: '127.0.0.1',
      httpPort: 8080,
      grpcPort: 8081,
      workers: 'auto',
      projectorPort: 8082,
      relayPort: 8083,
      auth: 'bearer',
      apiTokens: ['caller-token-0000001', 'caller-token-0000002'],
      adminToken: 'admin-token-00000001',
      tokenSecret: 'hmac-secret-00000001',
      shards: 64,
      backendTimeoutMs: 100,
      redisWaitReplicas: 0,
      redisWaitTimeoutMs: 100,
      localFallbackShare: 'auto',
      localFallbackMaxKeys: 100_000,
      overrideCacheRefreshMs: 1_000,
      overrideCacheMaxEntries: 100_000,
      maxCost: 1_000_000,
      idempotencyTtlMs: 86_400_000,
      auditRetentionMs: 30 * 86_400_000,
      projectorStepCells: 12_000,
      projectorFetchWaitMs: 1_000,
      projectorFetchMinBytes: 1,
      projectorCommitIntervalMs: 1_000,
      relayClaimIdleMs: 30_000,
      relayLingerMs: 50,
      relayBatchSize: 1000,
      relayCompression: 'none',
      consoleSampleMs: 10_000,
      topicPartitions: 12,
      topicReplication: 'auto',
      logLevel: 'info',
      tracing: 'off',
      traceSampleRatio: 0.01,
      otlpEndpoint: 'http://127.0.0.1:4318',
      bodyLimitBytes: 1_048_576,
      maxInflight: 2048,
      grpcMaxMessageBytes: 65_536,
      grpcMaxDescriptors: 64,
      grpcXRateLimitHeaders: 'off',
      grpcReadTimeoutMs: 10_000,
      grpcKeepaliveTimeMs: 300_000,
      grpcKeepaliveTimeoutMs: 20_000,
      grpcMaxConnectionIdleMs: 300_000,
      grpcMaxConnectionAgeMs: 1_800_000,
      headersTimeoutMs: 10_000,
      requestTimeoutMs: 30_000,
      idleTimeoutMs: 72_000,
    });
  });

  it('reads given values, trimming them and treating blanks as unset', () => {
    const sut = loadConfig({
      ...SECRETS,
      KAFKA_BROKERS: ' k1:9092 , k2:9093 ',
      TALLY_HTTP_PORT: ' 9000 ',
      TALLY_GRPC_PORT: '',
      TALLY_IDEMPOTENCY_TTL: '90m',
      TALLY_HOST: '0.0.0.0',
      TALLY_TOPIC_REPLICATION: '3',
      TALLY_WORKERS: '4',
    });

    expect(sut.workers).toBe(4);
    expect(sut.kafkaBrokers).toEqual(['k1:9092', 'k2:9093']);
    expect(sut.topicReplication).toBe(3);
    expect(sut.httpPort).toBe(9000);
    expect(sut.grpcPort).toBe(8081);
    expect(sut.idempotencyTtlMs).toBe(90 * 60_000);
    expect(sut.host).toBe('0.0.0.0');
  });

  it('reads the tracing settings, the OpenTelemetry variables among them', () => {
    const sut = loadConfig({
      ...SECRETS,
      TALLY_TRACING: 'on',
      TALLY_TRACE_SAMPLE_RATIO: '0.25',
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318',
      OTEL_SERVICE_NAME: 'quota',
    });

    expect([sut.tracing, sut.traceSampleRatio, sut.otlpEndpoint, sut.otelServiceName]).toEqual([
      'on',
      0.25,
      'http://collector:4318',
      'quota',
    ]);
  });

  it.each([
    ['1.5', 'TALLY_TRACE_SAMPLE_RATIO: must be a number between 0 and 1 (got "1.5")'],
    ['1%', 'TALLY_TRACE_SAMPLE_RATIO: must be a number between 0 and 1 (got "1%")'],
    ['-0.1', 'TALLY_TRACE_SAMPLE_RATIO: must be a number between 0 and 1 (got "-0.1")'],
  ])('refuses the sample ratio %s', (ratio, line) => {
    expect(problemsOf({ ...SECRETS, TALLY_TRACE_SAMPLE_RATIO: ratio })).toEqual([line]);
  });

  it('refuses an OTLP endpoint that is not an http(s) URL, and tracing neither on nor off', () => {
    expect(
      problemsOf({ ...SECRETS, TALLY_TRACING: 'yes', OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' }),
    ).toEqual([
      'TALLY_TRACING: must be one of on, off (got "yes")',
      'OTEL_EXPORTER_OTLP_ENDPOINT: must be an http:// or https:// URL without credentials (got "collector:4318")',
    ]);
  });

  it('leaves the variables of the project tooling alone', () => {
    const sut = () => loadConfig({ ...SECRETS, TALLY_NODE_VERSION: '24.22.3' });

    expect(sut).not.toThrow();
  });

  it('returns a frozen object', () => {
    const sut = loadConfig(SECRETS);

    expect(Object.isFrozen(sut)).toBe(true);
    expect(Object.isFrozen(sut.apiTokens)).toBe(true);
    expect(Object.isFrozen(sut.redis)).toBe(true);
  });

  it('needs no tokens when TALLY_AUTH=none, but still the HMAC secret', () => {
    const sut = loadConfig({ TALLY_AUTH: 'none', TALLY_TOKEN_SECRET: SECRETS.TALLY_TOKEN_SECRET });

    expect(sut.auth).toBe('none');
    expect(sut.apiTokens).toBeUndefined();
  });

  it('needs no simple-form tokens with a tokens file, and still checks the ones given', () => {
    const secret = { TALLY_TOKEN_SECRET: SECRETS.TALLY_TOKEN_SECRET };

    const sut = loadConfig({ ...secret, TALLY_TOKENS_FILE: '/etc/tally/tokens.yaml' });

    expect(sut.tokensFile).toBe('/etc/tally/tokens.yaml');
    expect(sut.apiTokens).toBeUndefined();
    expect(sut.adminToken).toBeUndefined();
    expect(problemsOf({ ...secret, TALLY_TOKENS_FILE: 't.yaml', TALLY_ADMIN_TOKEN: 'short' })).toEqual([
      'TALLY_ADMIN_TOKEN: must be at least 16 characters (got 5 characters)',
    ]);
  });

  it.each([
    ['redis://10.0.0.5:6380/2', { mode: 'single', url: 'redis://10.0.0.5:6380/2' }],
    ['rediss://user:pw@cache.internal:6380', { mode: 'single', url: 'rediss://user:pw@cache.internal:6380' }],
    [
      'redis+cluster://r1:7000,r2:7001',
      {
        mode: 'cluster',
        tls: false,
        nodes: [
          { host: 'r1', port: 7000 },
          { host: 'r2', port: 7001 },
        ],
      },
    ],
    [
      'rediss+cluster://app:s%40cret@r1:7000,r2',
      {
        mode: 'cluster',
        tls: true,
        username: 'app',
        password: 's@cret',
        nodes: [
          { host: 'r1', port: 7000 },
          { host: 'r2', port: 6379 },
        ],
      },
    ],
    [
      '10.0.0.1:7000, 10.0.0.2:7000,[::1]:7002',
      {
        mode: 'cluster',
        tls: false,
        nodes: [
          { host: '10.0.0.1', port: 7000 },
          { host: '10.0.0.2', port: 7000 },
          { host: '[::1]', port: 7002 },
        ],
      },
    ],
  ])('parses REDIS_URL %s', (url, expected) => {
    const sut = loadConfig({ ...SECRETS, REDIS_URL: url });

    expect(sut.redis).toEqual(expected);
  });

  // The table of bad environments: each row is an environment and the exact lines it must produce.
  const BAD_ENVIRONMENTS: { case: string; env: NodeJS.ProcessEnv; errors: string[] }[] = [
    {
      case: 'nothing at all',
      env: {},
      errors: [
        'TALLY_API_TOKENS: required unless TALLY_AUTH=none or TALLY_TOKENS_FILE is set (comma-separated, each at least 16 characters)',
        'TALLY_ADMIN_TOKEN: required unless TALLY_AUTH=none or TALLY_TOKENS_FILE is set (at least 16 characters)',
        'TALLY_TOKEN_SECRET: required (at least 16 characters)',
      ],
    },
    {
      case: 'a port that is not a number',
      env: { ...SECRETS, TALLY_HTTP_PORT: 'abc' },
      errors: ['TALLY_HTTP_PORT: must be an integer between 1 and 65535 (got "abc")'],
    },
    {
      case: 'a port out of range',
      env: { ...SECRETS, TALLY_PROJECTOR_PORT: '70000' },
      errors: ['TALLY_PROJECTOR_PORT: must be an integer between 1 and 65535 (got "70000")'],
    },
    {
      case: 'port zero and a fractional port',
      env: { ...SECRETS, TALLY_RELAY_PORT: '0', TALLY_GRPC_PORT: '80.5' },
      errors: [
        'TALLY_GRPC_PORT: must be an integer between 1 and 65535 (got "80.5")',
        'TALLY_RELAY_PORT: must be an integer between 1 and 65535 (got "0")',
      ],
    },
    {
      case: 'HTTP and gRPC on one port',
      env: { ...SECRETS, TALLY_HTTP_PORT: '9000', TALLY_GRPC_PORT: '9000' },
      errors: ['TALLY_GRPC_PORT: must differ from TALLY_HTTP_PORT, both serve in decision-api (got "9000")'],
    },
    {
      case: 'a bad Redis URL',
      env: { ...SECRETS, REDIS_URL: 'http://localhost:6379' },
      errors: [
        'REDIS_URL: must be redis://host:port, rediss://host:port, redis+cluster://h1:p1,h2:p2 or a list h1:p1,h2:p2 (got "http://localhost:6379")',
      ],
    },
    {
      case: 'a lone bare host:port (node or cluster?)',
      env: { ...SECRETS, REDIS_URL: 'localhost:6379' },
      errors: [
        'REDIS_URL: must be redis://host:port, rediss://host:port, redis+cluster://h1:p1,h2:p2 or a list h1:p1,h2:p2 (got "localhost:6379")',
      ],
    },
    {
      case: 'a broker without a port',
      env: { ...SECRETS, KAFKA_BROKERS: 'k1:9092,k2' },
      errors: ['KAFKA_BROKERS: must be a comma-separated list of host:port (got "k1:9092,k2")'],
    },
    {
      case: 'an unknown auth mode',
      env: { ...SECRETS, TALLY_AUTH: 'basic' },
      errors: ['TALLY_AUTH: must be one of bearer, none (got "basic")'],
    },
    {
      case: 'short secrets, never echoed',
      env: {
        TALLY_API_TOKENS: 'caller-token-0000001,short',
        TALLY_ADMIN_TOKEN: 'admin',
        TALLY_TOKEN_SECRET: 'tiny',
      },
      errors: [
        'TALLY_API_TOKENS: every token must be at least 16 characters (got 2 tokens of 20, 5 characters)',
        'TALLY_ADMIN_TOKEN: must be at least 16 characters (got 5 characters)',
        'TALLY_TOKEN_SECRET: must be at least 16 characters (got 4 characters)',
      ],
    },
    {
      case: 'a token list of commas only',
      env: { ...SECRETS, TALLY_API_TOKENS: ' , ,' },
      errors: [
        'TALLY_API_TOKENS: required unless TALLY_AUTH=none or TALLY_TOKENS_FILE is set (comma-separated, each at least 16 characters) (got no tokens)',
      ],
    },
    {
      case: 'an admin token that is also a caller token, never echoed',
      env: { ...SECRETS, TALLY_API_TOKENS: 'caller-token-0000001,admin-token-00000001' },
      errors: [
        'TALLY_ADMIN_TOKEN: must differ from every TALLY_API_TOKENS token (an admin token is never a caller token)',
      ],
    },
    {
      case: 'a tokens file with auth off',
      env: {
        TALLY_TOKEN_SECRET: SECRETS.TALLY_TOKEN_SECRET,
        TALLY_AUTH: 'none',
        TALLY_TOKENS_FILE: 't.yaml',
      },
      errors: ['TALLY_TOKENS_FILE: has no effect with TALLY_AUTH=none; unset one of them'],
    },
    {
      case: 'shards out of range',
      env: { ...SECRETS, TALLY_SHARDS: '16385' },
      errors: ['TALLY_SHARDS: must be an integer between 1 and 16384 (got "16385")'],
    },
    {
      case: 'a cost ceiling of 0',
      env: { ...SECRETS, TALLY_MAX_COST: '0' },
      errors: ['TALLY_MAX_COST: must be an integer between 1 and 1000000000000 (got "0")'],
    },
    {
      case: 'a cost ceiling past 10^12',
      env: { ...SECRETS, TALLY_MAX_COST: '1000000000001' },
      errors: ['TALLY_MAX_COST: must be an integer between 1 and 1000000000000 (got "1000000000001")'],
    },
    {
      case: 'a negative timeout',
      env: { ...SECRETS, TALLY_BACKEND_TIMEOUT_MS: '-5' },
      errors: ['TALLY_BACKEND_TIMEOUT_MS: must be an integer between 1 and 60000 (got "-5")'],
    },
    {
      case: 'durable mode out of range (WAIT 0 would wait forever)',
      env: { ...SECRETS, TALLY_REDIS_WAIT_REPLICAS: '17', TALLY_REDIS_WAIT_TIMEOUT_MS: '0' },
      errors: [
        'TALLY_REDIS_WAIT_REPLICAS: must be an integer between 0 and 16 (got "17")',
        'TALLY_REDIS_WAIT_TIMEOUT_MS: must be an integer between 1 and 60000 (got "0")',
      ],
    },
    {
      case: 'a local fallback share of 0 and a key bound that is no number',
      env: { ...SECRETS, TALLY_LOCAL_FALLBACK_SHARE: '0', TALLY_LOCAL_FALLBACK_MAX_KEYS: 'x' },
      errors: [
        'TALLY_LOCAL_FALLBACK_SHARE: must be "auto" or an integer between 1 and 100000 (got "0")',
        'TALLY_LOCAL_FALLBACK_MAX_KEYS: must be an integer between 1 and 10000000 (got "x")',
      ],
    },
    {
      case: 'durations without a unit or with an unknown unit',
      env: { ...SECRETS, TALLY_IDEMPOTENCY_TTL: '3600', TALLY_AUDIT_RETENTION: '2w' },
      errors: [
        'TALLY_IDEMPOTENCY_TTL: must be a duration like 500ms, 30s, 15m, 24h or 30d, between 1s and 365d (got "3600")',
        'TALLY_AUDIT_RETENTION: must be a duration like 500ms, 30s, 15m, 24h or 30d, between 1m and 3650d (got "2w")',
      ],
    },
    {
      case: 'a duration too short',
      env: { ...SECRETS, TALLY_IDEMPOTENCY_TTL: '10ms' },
      errors: [
        'TALLY_IDEMPOTENCY_TTL: must be a duration like 500ms, 30s, 15m, 24h or 30d, between 1s and 365d (got "10ms")',
      ],
    },
    {
      case: 'topics and limits',
      env: {
        ...SECRETS,
        TALLY_TOPIC_PARTITIONS: '0',
        TALLY_TOPIC_REPLICATION: 'three',
        TALLY_BODY_LIMIT_BYTES: '10',
        TALLY_MAX_INFLIGHT: '1e6',
        TALLY_PROJECTOR_STEP_CELLS: '50',
        TALLY_WORKERS: '0',
      },
      errors: [
        'TALLY_WORKERS: must be "auto" or an integer between 1 and 256 (got "0")',
        'TALLY_PROJECTOR_STEP_CELLS: must be an integer between 100 and 1000000 (got "50")',
        'TALLY_TOPIC_PARTITIONS: must be an integer between 1 and 10000 (got "0")',
        'TALLY_TOPIC_REPLICATION: must be "auto" or an integer between 1 and 32 (got "three")',
        'TALLY_BODY_LIMIT_BYTES: must be an integer between 1024 and 104857600 (got "10")',
        'TALLY_MAX_INFLIGHT: must be an integer between 1 and 1000000 (got "1e6")',
      ],
    },
    {
      case: 'gRPC limits out of range',
      env: {
        ...SECRETS,
        TALLY_GRPC_MAX_MESSAGE_BYTES: '512',
        TALLY_GRPC_MAX_DESCRIPTORS: '1001',
        TALLY_GRPC_READ_TIMEOUT: '10',
        TALLY_GRPC_KEEPALIVE_TIME: '500ms',
        TALLY_GRPC_KEEPALIVE_TIMEOUT: '1h',
        TALLY_GRPC_MAX_CONNECTION_IDLE: '0s',
        TALLY_GRPC_MAX_CONNECTION_AGE: '25d',
      },
      errors: [
        'TALLY_GRPC_MAX_MESSAGE_BYTES: must be an integer between 1024 and 4194304 (got "512")',
        'TALLY_GRPC_MAX_DESCRIPTORS: must be an integer between 1 and 1000 (got "1001")',
        'TALLY_GRPC_READ_TIMEOUT: must be a duration like 500ms, 30s, 15m, 24h or 30d, between 100ms and 10m (got "10")',
        'TALLY_GRPC_KEEPALIVE_TIME: must be a duration like 500ms, 30s, 15m, 24h or 30d, between 1s and 24d (got "500ms")',
        'TALLY_GRPC_KEEPALIVE_TIMEOUT: must be a duration like 500ms, 30s, 15m, 24h or 30d, between 1s and 10m (got "1h")',
        'TALLY_GRPC_MAX_CONNECTION_IDLE: must be a duration like 500ms, 30s, 15m, 24h or 30d, between 1s and 24d (got "0s")',
        'TALLY_GRPC_MAX_CONNECTION_AGE: must be a duration like 500ms, 30s, 15m, 24h or 30d, between 1s and 24d (got "25d")',
      ],
    },
    {
      case: 'a TLS certificate without its key',
      env: { ...SECRETS, TALLY_TLS_CERT: '/etc/tally/tls.crt' },
      errors: ['TALLY_TLS_KEY: required when TALLY_TLS_CERT is set (both or neither)'],
    },
    {
      case: 'a TLS key without its certificate',
      env: { ...SECRETS, TALLY_TLS_KEY: '/etc/tally/tls.key' },
      errors: ['TALLY_TLS_CERT: required when TALLY_TLS_KEY is set (both or neither)'],
    },
    {
      case: 'a bad log level and bind host',
      env: { ...SECRETS, TALLY_LOG_LEVEL: 'verbose', TALLY_HOST: 'http://0.0.0.0' },
      errors: [
        'TALLY_HOST: must be an IP address or a host name (got "http://0.0.0.0")',
        'TALLY_LOG_LEVEL: must be one of debug, info, warn, error (got "verbose")',
      ],
    },
    {
      case: 'HTTP deadlines out of range',
      env: {
        ...SECRETS,
        TALLY_HEADERS_TIMEOUT_MS: '0',
        TALLY_REQUEST_TIMEOUT_MS: '5s',
        TALLY_IDLE_TIMEOUT_MS: '99',
      },
      errors: [
        'TALLY_HEADERS_TIMEOUT_MS: must be an integer between 100 and 600000 (got "0")',
        'TALLY_REQUEST_TIMEOUT_MS: must be an integer between 100 and 3600000 (got "5s")',
        'TALLY_IDLE_TIMEOUT_MS: must be an integer between 100 and 3600000 (got "99")',
      ],
    },
    {
      case: 'a headers deadline longer than the request deadline',
      env: { ...SECRETS, TALLY_HEADERS_TIMEOUT_MS: '20000', TALLY_REQUEST_TIMEOUT_MS: '15000' },
      errors: [
        'TALLY_HEADERS_TIMEOUT_MS: must not exceed TALLY_REQUEST_TIMEOUT_MS (15000), the headers are part of the request (got "20000")',
      ],
    },
    {
      case: 'typos and unknown TALLY_ settings',
      env: { ...SECRETS, TALLY_SHARD: '8', TALLY_HTTP_PROT: '1', TALLY_COLOR: 'red' },
      errors: [
        'TALLY_COLOR: unknown setting',
        'TALLY_HTTP_PROT: unknown setting (did you mean TALLY_HTTP_PORT?)',
        'TALLY_SHARD: unknown setting (did you mean TALLY_SHARDS?)',
      ],
    },
    {
      case: 'many problems at once: in setting order, unknown names last',
      env: {
        TALLY_TYPO: 'x',
        TALLY_SHARDS: 'lots',
        REDIS_URL: 'redis:/nohost',
        TALLY_AUTH: 'none',
        TALLY_HTTP_PORT: '-1',
      },
      errors: [
        'REDIS_URL: must be redis://host:port, rediss://host:port, redis+cluster://h1:p1,h2:p2 or a list h1:p1,h2:p2 (got "redis:/nohost")',
        'TALLY_HTTP_PORT: must be an integer between 1 and 65535 (got "-1")',
        'TALLY_TOKEN_SECRET: required (at least 16 characters)',
        'TALLY_SHARDS: must be an integer between 1 and 16384 (got "lots")',
        'TALLY_TYPO: unknown setting',
      ],
    },
  ];

  it.each(BAD_ENVIRONMENTS)('rejects $case', ({ env, errors }) => {
    // when
    const problems = problemsOf(env);

    // then: exactly these lines, nothing more
    expect(problems).toEqual(errors);
  });

  it('puts every problem in the error message, one per line', () => {
    const sut = () => loadConfig({ TALLY_AUTH: 'none', TALLY_SHARDS: '0' });

    expect(sut).toThrow(
      new ConfigError([
        'TALLY_TOKEN_SECRET: required (at least 16 characters)',
        'TALLY_SHARDS: must be an integer between 1 and 16384 (got "0")',
      ]),
    );
    expect(sut).toThrow(
      'Invalid configuration (2 problems):\n' +
        '  TALLY_TOKEN_SECRET: required (at least 16 characters)\n' +
        '  TALLY_SHARDS: must be an integer between 1 and 16384 (got "0")',
    );
  });
});

describe(loadConfigFor.name, () => {
  const CLI = ['redis', 'kafkaBrokers', 'shards'] as const;

  function problemsFor(env: NodeJS.ProcessEnv): readonly string[] {
    try {
      loadConfigFor(env, CLI);
    } catch (error) {
      if (error instanceof ConfigError) return error.problems;
      throw error;
    }
    return [];
  }

  it('returns the used settings only, validated, with the Redis target parsed', () => {
    const sut = loadConfigFor({ REDIS_URL: 'redis://10.0.0.1:6380', TALLY_SHARDS: '16' }, CLI);

    expect(sut).toEqual({
      redis: { mode: 'single', url: 'redis://10.0.0.1:6380' },
      kafkaBrokers: ['127.0.0.1:9092'],
      shards: 16,
    });
    expect(Object.isFrozen(sut)).toBe(true);
  });

  it("takes the services' environment: their secrets, tokens file and rules between them are not its concern", () => {
    // given what a service runs with, including what loadConfig itself refuses
    const services = {
      TALLY_AUTH: 'none',
      TALLY_TOKENS_FILE: '/etc/tally/tokens.yaml',
      TALLY_ADMIN_TOKEN: 'short',
      TALLY_HTTP_PORT: '8080',
      TALLY_GRPC_PORT: '8080',
      TALLY_TLS_CERT: '/nowhere/cert.pem',
    };
    expect(problemsOf(services).length).toBeGreaterThan(0);

    // then the tool, which reads none of them, runs
    expect(problemsFor(services)).toEqual([]);
  });

  it('still refuses a bad used setting and an unknown TALLY_* name, as loadConfig words them', () => {
    const env = { TALLY_SHARDS: 'lots', TALLY_SHRADS: '8', TALLY_AUTH: 'none', TALLY_TOKENS_FILE: 't.yaml' };

    expect(problemsFor(env)).toEqual([
      'TALLY_SHARDS: must be an integer between 1 and 16384 (got "lots")',
      'TALLY_SHRADS: unknown setting (did you mean TALLY_SHARDS?)',
    ]);
  });
});
