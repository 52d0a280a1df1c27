import { Metadata, status, type ServerInterceptingCallInterface } from '@grpc/grpc-js';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { RlsCallGate, UNAUTHENTICATED_DETAILS, type RlsRefusal } from './rls-call-gate';

type Listener = Parameters<ServerInterceptingCallInterface['start']>[0];
type SentStatus = Parameters<ServerInterceptingCallInterface['sendStatus']>[0];

/**
 * The transport side of one call, as grpc-js's base call behaves towards interceptors: it delivers
 * the metadata to the listener, and ends every call (status sent, or client gone) with `onCancel`.
 */
class TransportCall implements ServerInterceptingCallInterface {
  listener?: Listener;
  readonly statuses: SentStatus[] = [];

  start(listener: Listener): void {
    this.listener = listener;
  }
  receiveMetadata(metadata: Metadata): void {
    this.listener?.onReceiveMetadata(metadata);
  }
  receiveHalfClose(): void {
    this.listener?.onReceiveHalfClose();
  }
  /** The call ends (answered, refused or cancelled by the client). */
  end(): void {
    this.listener?.onCancel();
  }
  sendStatus(sent: SentStatus): void {
    this.statuses.push(sent);
    this.end();
  }
  sendMetadata(): void {}
  sendMessage(_message: unknown, callback: () => void): void {
    callback();
  }
  startRead(): void {}
  getPeer = (): string => 'test';
  getDeadline = (): number => Infinity;
  getHost = (): string => 'test';
  getAuthContext = () => ({});
  getConnectionInfo = () => ({});
  getMetricsRecorder = (): never => {
    throw new Error('unused');
  };
}

const GOOD = 'Bearer good-token';
const method = {} as Parameters<RlsCallGate['interceptor']>[0];

describe(RlsCallGate.name, () => {
  let refusals: RlsRefusal[];
  let sut: RlsCallGate;

  beforeEach(() => {
    refusals = [];
    sut = new RlsCallGate({
      authorize: (metadata) =>
        metadata.get('authorization')[0] === GOOD
          ? undefined
          : { code: status.UNAUTHENTICATED, details: UNAUTHENTICATED_DETAILS },
      maxInflight: 2,
      readTimeoutMs: 1000,
      onRefused: (reason) => refusals.push(reason),
    });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  /** A call through the gate; `reached` says whether the handler saw its metadata (and so reads it). */
  function call(authorization?: string) {
    const transport = new TransportCall();
    let reached = false;
    sut.interceptor(method, transport).start({
      onReceiveMetadata: () => (reached = true),
      onReceiveMessage: () => undefined,
      onReceiveHalfClose: () => undefined,
      onCancel: () => undefined,
    });
    const metadata = new Metadata();
    if (authorization !== undefined) metadata.set('authorization', authorization);
    transport.receiveMetadata(metadata);
    return { transport, reached: () => reached };
  }

  it('admits a call with an accepted token and counts it in flight until it ends', () => {
    const admitted = call(GOOD);

    expect(admitted.reached()).toBe(true);
    expect(sut.inFlight).toBe(1);
    admitted.transport.end();
    expect(sut.inFlight).toBe(0);
    expect(admitted.transport.statuses).toEqual([]);
  });

  it("hands the call's peer (its connection) to authorize with the metadata", () => {
    const seen: string[] = [];
    const gate = new RlsCallGate({
      authorize: (_metadata, peer) => {
        seen.push(peer);
        return undefined;
      },
      maxInflight: 2,
      readTimeoutMs: 1000,
    });
    const transport = new TransportCall();
    transport.getPeer = () => '10.0.0.7:41234';
    gate.interceptor(method, transport).start({
      onReceiveMetadata: () => undefined,
      onReceiveMessage: () => undefined,
      onReceiveHalfClose: () => undefined,
      onCancel: () => undefined,
    });

    transport.receiveMetadata(new Metadata());

    expect(seen).toEqual(['10.0.0.7:41234']);
    transport.end();
  });

  it.each([
    ['no token', undefined],
    ['a wrong token', 'Bearer nope'],
  ])('refuses %s with UNAUTHENTICATED before the handler, taking no slot', (_case, authorization) => {
    const refused = call(authorization);

    expect(refused.reached()).toBe(false);
    expect(refused.transport.statuses).toEqual([expect.objectContaining({ code: status.UNAUTHENTICATED })]);
    expect(sut.inFlight).toBe(0);
    expect(refusals).toEqual(['unauthenticated']);
  });

  it('sheds above maxInflight with UNAVAILABLE server.overloaded, and admits again once a slot is free', () => {
    const first = call(GOOD);
    call(GOOD);

    const shed = call(GOOD);
    first.transport.end();
    const later = call(GOOD);

    expect(shed.reached()).toBe(false);
    expect(shed.transport.statuses).toEqual([
      expect.objectContaining({
        code: status.UNAVAILABLE,
        details: expect.stringMatching(/^server\.overloaded: /),
      }),
    ]);
    expect(later.reached()).toBe(true);
    expect(sut.inFlight).toBe(2);
    expect(refusals).toEqual(['overloaded']);
  });

  it('never lets unauthenticated calls take the slots of callers with a token', () => {
    for (let i = 0; i < 10; i++) call('Bearer stranger');

    const admitted = [call(GOOD), call(GOOD)];

    expect(admitted.map((c) => c.reached())).toEqual([true, true]);
  });

  it('ends a call whose request has not arrived within the read deadline, giving its slot back', () => {
    vi.useFakeTimers();
    const stalled = call(GOOD);

    vi.advanceTimersByTime(999);
    expect(stalled.transport.statuses).toEqual([]);
    vi.advanceTimersByTime(1);

    expect(stalled.transport.statuses).toEqual([expect.objectContaining({ code: status.DEADLINE_EXCEEDED })]);
    expect(sut.inFlight).toBe(0);
    expect(refusals).toEqual(['read_timeout']);
  });

  it('stops the read deadline once the request is complete (half-close)', () => {
    vi.useFakeTimers();
    const answered = call(GOOD);

    answered.transport.receiveHalfClose();
    vi.advanceTimersByTime(10_000);

    expect(answered.transport.statuses).toEqual([]);
    expect(sut.inFlight).toBe(1);
  });

  it('gives a slot back once, however often the end is reported', () => {
    const admitted = call(GOOD);
    call(GOOD);

    admitted.transport.end();
    admitted.transport.end();

    expect(sut.inFlight).toBe(1);
  });
});
