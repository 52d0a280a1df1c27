import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';

/**
 * A consumer name no other relay (nor an earlier life of this one) uses: `host-pid-random`. A
 * restarted relay must not inherit its predecessor's pending entries by name; those are re-claimed
 * by idle time instead, which also works when the predecessor ran on another host.
 */
export function relayConsumerName(): string {
  return `${hostname()}-${process.pid}-${randomBytes(4).toString('hex')}`;
}
