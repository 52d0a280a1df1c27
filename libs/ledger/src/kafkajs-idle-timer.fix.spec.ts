import { afterEach, describe, expect, it } from 'vitest';
import {
  armRequestTimeoutCheck,
  fixKafkajsIdleTimer,
  scheduleCheckPendingRequests,
  type TimeoutCheckedQueue,
} from './kafkajs-idle-timer.fix';

interface Queue {
  pending: unknown[];
  throttledUntil: number;
  throttleCheckTimeoutId: ReturnType<typeof setTimeout> | null;
  checks: number;
  checkPendingRequests(): void;
  scheduleCheckPendingRequests(): void;
}

// eslint-disable-next-line @typescript-eslint/no-require-imports
const RequestQueue = require('kafkajs/src/network/requestQueue') as {
  prototype: { scheduleCheckPendingRequests(this: Queue): void };
};
/** kafkajs's own method, read before any client applied the fix in this process. */
const original = RequestQueue.prototype.scheduleCheckPendingRequests;

/** The fields of a RequestQueue the scheduler reads, with `schedule` as its scheduling method. */
function queueWith(schedule: (this: Queue) => void, over: Partial<Queue> = {}): Queue {
  const queue: Queue = {
    pending: [],
    throttledUntil: -1,
    throttleCheckTimeoutId: null,
    checks: 0,
    checkPendingRequests() {
      queue.checks++;
      queue.scheduleCheckPendingRequests();
    },
    scheduleCheckPendingRequests: () => schedule.call(queue),
    ...over,
  };
  return queue;
}

const armed: Queue[] = [];
afterEach(() => {
  for (const q of armed.splice(0)) if (q.throttleCheckTimeoutId) clearTimeout(q.throttleCheckTimeoutId);
});

describe(fixKafkajsIdleTimer.name, () => {
  it("kafkajs's own scheduler re-arms a timer with nothing pending (the defect being fixed)", async () => {
    // given: an idle queue (nothing pending, never throttled) with kafkajs's method
    const queue = queueWith(original);
    armed.push(queue);
    // when: a response arrives (fulfillRequest → checkPendingRequests), then 30 ms pass
    queue.checkPendingRequests();
    await new Promise((resolve) => setTimeout(resolve, 30));
    // then: the check ran again and again, and a timer is still armed
    expect(queue.checks).toBeGreaterThan(3);
    expect(queue.throttleCheckTimeoutId).not.toBeNull();
  });

  it('the fix arms nothing while idle', async () => {
    const queue = queueWith(scheduleCheckPendingRequests);
    armed.push(queue);
    queue.checkPendingRequests();
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(queue.checks).toBe(1);
    expect(queue.throttleCheckTimeoutId).toBeNull();
  });

  it('the fix still re-checks pending requests, at the end of a throttle or after 10 ms', () => {
    const pending = queueWith(scheduleCheckPendingRequests, { pending: [{}] });
    const throttled = queueWith(scheduleCheckPendingRequests, { throttledUntil: Date.now() + 5_000 });
    armed.push(pending, throttled);
    pending.scheduleCheckPendingRequests();
    throttled.scheduleCheckPendingRequests();
    expect(pending.throttleCheckTimeoutId).not.toBeNull();
    expect(throttled.throttleCheckTimeoutId).not.toBeNull();
  });

  it("replaces kafkajs's method once, on the real RequestQueue", () => {
    fixKafkajsIdleTimer();
    fixKafkajsIdleTimer();
    expect(RequestQueue.prototype.scheduleCheckPendingRequests).toBe(scheduleCheckPendingRequests);
  });
});

type TimeoutQueue = TimeoutCheckedQueue & {
  sendSocketRequest(request: { send(): void; expectResponse: boolean }): void;
  scheduleRequestTimeoutCheck(): void;
};

// eslint-disable-next-line @typescript-eslint/no-require-imports
const RealQueue = require('kafkajs/src/network/requestQueue') as {
  new (options: Record<string, unknown>): TimeoutQueue;
  prototype: TimeoutQueue;
};
/** kafkajs's own connect-time scheduler, read before any client applied the fix in this process. */
const originalTimeoutCheck = RealQueue.prototype.scheduleRequestTimeoutCheck;
const noLog = {
  debug: () => undefined,
  warn: () => undefined,
  error: () => undefined,
  info: () => undefined,
};

function realQueue(requestTimeout = 20): TimeoutQueue {
  return new RealQueue({
    maxInFlightRequests: 1,
    requestTimeout,
    enforceRequestTimeout: true,
    clientId: 'spec',
    broker: 'spec:9092',
    logger: noLog,
  });
}

const sleepMs = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe(armRequestTimeoutCheck.name, () => {
  const queues: TimeoutQueue[] = [];
  afterEach(() => {
    for (const q of queues.splice(0)) q.destroy();
  });

  it("kafkajs's own connect arms the request-timeout interval with nothing in flight (the defect being fixed)", () => {
    const queue = realQueue();
    queues.push(queue);

    originalTimeoutCheck.call(queue);

    expect(queue.inflight.size).toBe(0);
    expect(queue.requestTimeoutIntervalId).toBeTruthy();
  });

  it('the fix arms nothing at connect, arms the check with the first request and stops it once none is in flight', async () => {
    fixKafkajsIdleTimer();
    const queue = realQueue(20);
    queues.push(queue);
    // given: a connected queue, idle
    queue.scheduleRequestTimeoutCheck();
    expect(queue.requestTimeoutIntervalId).toBeFalsy();
    // when: a request goes in flight (kafkajs's SocketRequest puts itself in `inflight` when sent)
    const request = { sentAt: Date.now(), requestTimeout: 60_000, timeoutRequest: () => undefined };
    queue.sendSocketRequest({ send: () => queue.inflight.set(1, request), expectResponse: true });
    // then: the check runs; once the answer took the request out, the next tick stops it
    expect(queue.requestTimeoutIntervalId).toBeTruthy();
    queue.inflight.delete(1);
    await sleepMs(80);
    expect(queue.requestTimeoutIntervalId).toBeFalsy();
  });

  it('times out a request in flight longer than its timeout, as kafkajs does', async () => {
    const queue = realQueue(20);
    queues.push(queue);
    const timedOut: number[] = [];
    const request = {
      sentAt: Date.now() - 1_000,
      requestTimeout: 20,
      timeoutRequest: () => {
        timedOut.push(1);
        queue.inflight.delete(1);
      },
    };
    queue.inflight.set(1, request);

    armRequestTimeoutCheck(queue);
    await sleepMs(80);

    expect(timedOut).toEqual([1]);
    expect(queue.requestTimeoutIntervalId).toBeFalsy();
  });
});
