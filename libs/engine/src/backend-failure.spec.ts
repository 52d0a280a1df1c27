import { describe, expect, it } from 'vitest';
import { BackendTimeoutError, BreakerOpenError, classifyBackendError, withDeadline } from './backend-failure';

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
    const slow = new Promise((resolve) => setTimeout(resolve, 200));
    await expect(withDeadline(slow, 10)).rejects.toBeInstanceOf(BackendTimeoutError);
  });

  it('passes a fast answer through', async () => {
    await expect(withDeadline(Promise.resolve(42), 100)).resolves.toBe(42);
  });
});
