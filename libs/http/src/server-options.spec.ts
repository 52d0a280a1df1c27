import { describe, expect, it } from 'vitest';
import { checkingIntervalMs, serverOptions } from './server-options';

const DEADLINES = { headersTimeoutMs: 10_000, requestTimeoutMs: 30_000, idleTimeoutMs: 72_000 };

describe(checkingIntervalMs.name, () => {
  it.each([
    [10_000, 30_000, 1_000],
    [2_000, 3_000, 200],
    [500, 500, 100],
    [100, 100, 100],
  ])('checks deadlines of %i / %i ms every %i ms', (headersTimeoutMs, requestTimeoutMs, expected) => {
    expect(checkingIntervalMs({ headersTimeoutMs, requestTimeoutMs })).toBe(expected);
  });
});

describe(serverOptions.name, () => {
  it("turns on Node's read deadlines, which Fastify leaves off, and closes idle connections", () => {
    const sut = serverOptions(DEADLINES);

    expect(sut).toMatchObject({
      requestTimeout: 30_000,
      keepAliveTimeout: 72_000,
      connectionTimeout: 72_000,
      return503OnClosing: false,
      http: { headersTimeout: 10_000, requestTimeout: 30_000, connectionsCheckingInterval: 1_000 },
    });
    expect(sut.https).toBeUndefined();
  });

  it('serves TLS with the same deadlines, and bounds the handshake like the headers', () => {
    const tls = { cert: Buffer.from('cert'), key: Buffer.from('key') };

    const sut = serverOptions({ ...DEADLINES, tls });

    expect(sut.https).toMatchObject({
      cert: tls.cert,
      key: tls.key,
      headersTimeout: 10_000,
      requestTimeout: 30_000,
      handshakeTimeout: 10_000,
    });
    expect(sut.http).toBeUndefined();
  });
});
