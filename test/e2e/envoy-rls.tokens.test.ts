/**
 * The RLS remembers an accepted `authorization` per peer instead of hashing it on every call
 * (`PeerGrants`): a tokens reload must still stop a revoked token at once, on the gRPC connection
 * that had it accepted. Real DecisionApiModule, its gRPC server and Redis (`RlsStack`), a tokens
 * file reloaded with `POST /v1/tokens:reload`.
 */
import { mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connectivityState, status } from '@grpc/grpc-js';
import { type RlsRequest } from '@tally/envoy-rls';
import { tokenDigestHex } from '@tally/auth';
import { uniqueName } from '@tally/testing';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { ADMIN_TOKEN, CALLER_TOKEN } from './support/decision-api.harness';
import { RlsStack } from './support/rls-stack.harness';

const run = uniqueName('e2e-rls-tokens');
const DOMAIN = `${run}-edge`;
const POLICIES = `
policies:
  - name: ${run}-p
    match: { domain: ${DOMAIN} }
    key: [tenant]
    windows:
      - { name: hourly, role: sustained, algorithm: fixed_window, limit: 1000, period: 1h }
`;
const EDGE_TOKEN = `edge-decide-token-${run}`;
const request: RlsRequest = { domain: DOMAIN, descriptors: [{ entries: [{ key: 'tenant', value: run }] }] };

describe('RLS tokens remembered per peer', () => {
  let dir: string;
  let tokensPath: string;
  let sut: RlsStack;

  const writeTokens = async (text: string): Promise<void> => {
    const aside = join(dir, '.tokens.tmp');
    await writeFile(aside, text);
    await rename(aside, tokensPath);
  };
  const reload = async (): Promise<number> =>
    (
      await fetch(`${sut.httpUrl}/v1/tokens:reload`, {
        method: 'POST',
        headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
      })
    ).status;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'tally-rls-tokens-'));
    tokensPath = join(dir, 'tokens.yaml');
    await writeTokens(
      `tokens:\n  - { name: edge, sha256: ${tokenDigestHex(EDGE_TOKEN)}, roles: [decide] }\n`,
    );
    sut = await RlsStack.start(inject('redisUrl'), POLICIES, { env: { TALLY_TOKENS_FILE: tokensPath } });
  });

  afterAll(async () => {
    await sut?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('refuses a revoked token on the connection that had it accepted, once the file is reloaded', async () => {
    // given a connection on which the token was accepted, more than once (the second time recalled)
    expect((await sut.call(request, EDGE_TOKEN)).overall_code).toBe('OK');
    expect((await sut.call(request, EDGE_TOKEN)).overall_code).toBe('OK');

    // when the token is removed from the file and the tokens are reloaded
    await writeTokens('tokens: []\n');
    expect(await reload()).toBe(200);

    // then the same connection (still open) is refused that token, and the caller token still decides
    expect(sut.channel.getConnectivityState(false)).toBe(connectivityState.READY);
    const refused = await sut.failure(request, EDGE_TOKEN);
    expect(refused.code).toBe(status.UNAUTHENTICATED);
    expect((await sut.call(request, CALLER_TOKEN)).overall_code).toBe('OK');
    expect((await sut.failure(request, EDGE_TOKEN)).code).toBe(status.UNAUTHENTICATED);
    expect(sut.channel.getConnectivityState(false)).toBe(connectivityState.READY);
  });

  it('takes a token added by a reload on an open connection', async () => {
    const late = `late-decide-token-${run}`;
    expect((await sut.failure(request, late)).code).toBe(status.UNAUTHENTICATED);

    await writeTokens(`tokens:\n  - { name: late, sha256: ${tokenDigestHex(late)}, roles: [decide] }\n`);
    expect(await reload()).toBe(200);

    expect((await sut.call(request, late)).overall_code).toBe('OK');
  });
});
