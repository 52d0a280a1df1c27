/**
 * The `tally` CLI run where the services run: with their `.env` (what `./dev start` exports, a tokens
 * file, auth off…), read through the CLI's own `.env` loading, against the REAL Redis and Kafka. The
 * settings only the services read are not the CLI's errors; the ones it reads are still checked.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLedger, ledgerTopicSpecs } from '@tally/ledger';
import { testEnv, uniqueName } from '@tally/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withDotEnv } from '../../apps/cli/src/dot-env';
import { tally } from './cli.support';

describe('tally in the services’ environment', () => {
  const dir = mkdtempSync(join(tmpdir(), 'tally-cli-env-'));
  const proposed = join(dir, 'proposed.yaml');
  let env: NodeJS.ProcessEnv;

  /** The services' `.env`, as an operator keeps it beside them: the CLI reads it from its directory. */
  const servicesEnv = (extra: string[] = []): NodeJS.ProcessEnv => {
    writeFileSync(
      join(dir, '.env'),
      [
        // what `./dev start` exports (scripts/services.sh)
        'TALLY_API_TOKENS=caller-0123456789abcdef',
        'TALLY_ADMIN_TOKEN=admin-0123456789abcdef',
        'TALLY_TOKEN_SECRET=secret-0123456789abcdef',
        'TALLY_POLICIES=config/policies.yaml',
        'TALLY_CONSOLE_DECISION_API_URL=http://127.0.0.1:8080',
        'TALLY_CONSOLE_RELAY_URL=http://127.0.0.1:8083',
        // and a deployment's: a tokens file with auth off (the services refuse it; the CLI reads neither)
        'TALLY_TOKENS_FILE=/etc/tally/tokens.yaml',
        'TALLY_AUTH=none',
        ...extra,
      ].join('\n'),
    );
    return withDotEnv(
      { REDIS_URL: testEnv().redisUrl, KAFKA_BROKERS: testEnv().kafkaBrokers.join(',') },
      dir,
    );
  };

  beforeAll(async () => {
    writeFileSync(
      proposed,
      [
        'policies:',
        `  - name: ${uniqueName('env-p')}`,
        '    key: [tenant]',
        '    windows:',
        '      - { name: hourly, role: sustained, algorithm: fixed_window, limit: 8, period: 1h }',
      ].join('\n'),
    );
    env = servicesEnv();
    const ledger = createLedger({
      brokers: testEnv().kafkaBrokers,
      clientId: 'cli-env-test',
      logLevel: 'nothing',
    });
    try {
      await ledger.provisioner.ensureTopics(ledgerTopicSpecs({ partitions: 12, replicationFactor: 1 }));
    } finally {
      await ledger.close();
    }
  });

  afterAll(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  it('lists the projections (exit 0)', async () => {
    const run = await tally(['projections', 'list', '--json'], env);

    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(Array.isArray(JSON.parse(run.stdout))).toBe(true);
  });

  it('simulates a proposed policy file over a recorded range (exit 0)', async () => {
    const now = Date.now();
    const range = ['--from', new Date(now - 60_000).toISOString(), '--to', new Date(now).toISOString()];

    const run = await tally(
      ['simulate', '--policies', proposed, '--tenant', uniqueName('env-t'), ...range, '--json'],
      env,
    );

    expect(run.stderr).not.toContain('Invalid configuration');
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ decisions: 0 });
  });

  it('still refuses a bad setting it reads, and a misspelled one, with exit 2', async () => {
    const run = await tally(['projections', 'list'], servicesEnv(['TALLY_SHARDS=0', 'TALLY_SHRADS=8']));

    expect(run.code).toBe(2);
    expect(run.stderr).toContain('TALLY_SHARDS: must be an integer between 1 and 16384 (got "0")');
    expect(run.stderr).toContain('TALLY_SHRADS: unknown setting (did you mean TALLY_SHARDS?)');
    expect(run.stderr).not.toContain('TALLY_TOKENS_FILE');
  });
});
