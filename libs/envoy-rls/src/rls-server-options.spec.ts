import { describe, expect, it } from 'vitest';
import { MAX_SEND_MESSAGE_BYTES, rlsServerOptions } from './rls-server-options';

describe(rlsServerOptions.name, () => {
  const limits = {
    maxMessageBytes: 65_536,
    keepaliveTimeMs: 300_000,
    keepaliveTimeoutMs: 20_000,
    maxConnectionIdleMs: 300_000,
    maxConnectionAgeMs: 1_800_000,
  };

  it('maps each limit to the grpc-js option of that name', () => {
    const sut = rlsServerOptions(limits);

    expect(sut).toEqual({
      'grpc.max_receive_message_length': 65_536,
      'grpc.max_send_message_length': MAX_SEND_MESSAGE_BYTES,
      'grpc.keepalive_time_ms': 300_000,
      'grpc.keepalive_timeout_ms': 20_000,
      'grpc.max_connection_idle_ms': 300_000,
      'grpc.max_connection_age_ms': 1_800_000,
      'grpc.max_connection_age_grace_ms': 60_000,
      'grpc.enable_channelz': 0,
    });
  });

  it('never sends less than it accepts', () => {
    const sut = rlsServerOptions({ ...limits, maxMessageBytes: 4 * 1024 * 1024 });

    expect(sut['grpc.max_send_message_length']).toBe(4 * 1024 * 1024);
  });
});
