import { afterEach, describe, expect, it } from 'vitest';
import { fixKafkajsIdleTimer, scheduleCheckPendingRequests } from './kafkajs-idle-timer.fix';

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
