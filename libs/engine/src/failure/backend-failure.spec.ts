import { once } from 'node:events';
import { createServer, connect, type Socket } from 'node:net';
import { describe, expect, it, vi } from 'vitest';
import {
  BackendTimeoutError,
  BreakerOpenError,
  classifyBackendError,
  countsAsOutage,
  pipelineDeadlineMs,
  withDeadline,
} from './backend-failure';

/** What ioredis rejects with when Redis answers an error (its ReplyError class is typed `any`). */
function replyError(message: string): Error {
  return Object.assign(new Error(message), { name: 'ReplyError' });
}

describe(classifyBackendError.name, () => {
  it.each([
    [new BackendTimeoutError(100), 'backend_timeout'],
    [new BreakerOpenError(), 'backend_unavailable'],
    [new Error("Stream isn't writeable and enableOfflineQueue options is false"), 'backend_unavailable'],
    [new Error('connect ECONNREFUSED 127.0.0.1:6390'), 'backend_unavailable'],
    [new Error('Connection is closed.'), 'backend_unavailable'],
    [replyError('LOADING Redis is loading the dataset in memory'), 'backend_unavailable'],
    [replyError('CLUSTERDOWN The cluster is down'), 'backend_unavailable'],
    [replyError('ERR user_script:12: attempt to compare nil with number'), 'backend_error'],
    [new Error('Command timed out'), 'backend_timeout'],
  ])('%s → %s', (error, reason) => {
    expect(classifyBackendError(error)).toBe(reason);
  });
});

describe(withDeadline.name, () => {
  it('rejects with a timeout when the work is slower than the deadline', async () => {
    // Never answered: a reply due later would win whenever a stall of this process outlasted both
    // (by design, see the next-but-one test), so a busy machine could not tell the two apart.
    const slow = new Promise(() => undefined);
    await expect(withDeadline(slow, 10)).rejects.toBeInstanceOf(BackendTimeoutError);
  });

  it('passes a fast answer through', async () => {
    await expect(withDeadline(Promise.resolve(42), 100)).resolves.toBe(42);
  });

  it('passes a failure through as it is', async () => {
    const failure = new Error('connection lost');
    await expect(withDeadline(Promise.reject(failure), 100)).rejects.toBe(failure);
  });

  it('leaves no timer behind once the work has settled', async () => {
    vi.useFakeTimers();
    try {
      await withDeadline(Promise.resolve(1), 100);
      await withDeadline(Promise.reject(new Error('x')), 100).catch(() => undefined);
      expect(vi.getTimerCount()).toBe(0);
    } finally {
      vi.useRealTimers();
    }
  });

  it('lets a reply that arrived during a stall of this process win over the deadline', async () => {
    // given a connected socket pair on loopback
    const server = createServer();
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const accepted = once(server, 'connection') as Promise<[Socket]>;
    const client = connect((server.address() as { port: number }).port, '127.0.0.1');
    const [peer] = await accepted;
    try {
      // when the reply is sent, and this process stalls past the deadline before reading it
      const reply = new Promise<string>((resolve) => client.once('data', (b) => resolve(b.toString())));
      peer.write('pong');
      const sut = withDeadline(reply, 10);
      const stallUntil = performance.now() + 60;
      while (performance.now() < stallUntil); // the event loop is blocked, as under CPU starvation

      // then the reply already in the socket is the answer, not a timeout
      await expect(sut).resolves.toBe('pong');
    } finally {
      client.destroy();
      peer.destroy();
      server.close();
    }
  });
});

describe(pipelineDeadlineMs.name, () => {
  it.each([
    [100, 1, 102],
    [100, 50, 200],
    [100, 100, 300],
    [100, 1000, 2100],
    [150, 3, 159],
  ])('a step deadline of %i ms gives a pipeline of %i scripts %i ms', (stepMs, scripts, expected) => {
    expect(pipelineDeadlineMs(stepMs, scripts)).toBe(expected);
  });
});

describe(countsAsOutage.name, () => {
  const started = { startedAt: 1_000, probing: false };
  it.each([
    ['a timeout while Redis answered nothing since the step started', 'backend_timeout', 900, false, true],
    ['a timeout while Redis answered another step meanwhile', 'backend_timeout', 1_001, false, false],
    ['a timed-out half-open probe, whatever else answered', 'backend_timeout', 1_001, true, true],
    ['a lost connection, even right after an answer', 'backend_unavailable', 1_001, false, true],
    ['a script error (Redis answered)', 'backend_error', 900, false, false],
  ] as const)('%s → %s', (_name, failure, lastAnswerAt, probing, expected) => {
    expect(countsAsOutage(failure, { ...started, lastAnswerAt, probing })).toBe(expected);
  });
});
