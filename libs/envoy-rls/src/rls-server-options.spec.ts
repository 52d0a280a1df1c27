import { describe, expect, it } from 'vitest';
import { CONNECTION_AGE_GRACE_MS, MAX_SEND_MESSAGE_BYTES, rlsServerOptions } from './rls-server-options';

describe(rlsServerOptions.name, () => {
  const limits = {
    maxMessageBytes: 65_536,
    keepaliveTimeMs: 300_000,
    keepaliveTimeoutMs: 20_000,
    maxConnectionIdleMs: 300_000,
    maxConnectionAgeMs: 1_800_000,
  };

  it('keeps each limit, and adds the answer bound and the connection age grace', () => {
    const sut = rlsServerOptions(limits);

    expect(sut).toEqual({
      ...limits,
      maxSendMessageBytes: MAX_SEND_MESSAGE_BYTES,
      connectionAgeGraceMs: CONNECTION_AGE_GRACE_MS,
    });
  });

  it('never sends less than it accepts', () => {
    const sut = rlsServerOptions({ ...limits, maxMessageBytes: 4 * 1024 * 1024 });

    expect(sut.maxSendMessageBytes).toBe(4 * 1024 * 1024);
  });
});
