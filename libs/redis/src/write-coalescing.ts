import { Cluster, type Redis } from 'ioredis';
import type { RedisClient } from './redis-connection';

/** Runs `callback` once the current event-loop turn has issued everything it will issue. */
export type TurnEnd = (callback: () => void) => void;

/** The part of a socket (any Node Writable) the coalescer drives. */
export interface Corkable {
  cork(): void;
  uncork(): void;
}

/**
 * One connection's writes of one event-loop turn as one socket write. The first write of a turn
 * corks the connection's socket and asks for the turn's end; the writes that follow stay in the
 * socket's buffer, in the order they were issued; at the turn's end the socket is uncorked and
 * Node hands the whole buffer to the kernel as one `writev`. Nothing else changes: each command is
 * still in ioredis's reply queue from the moment it is issued, so many commands stay in flight
 * (unlike ioredis's auto-pipelining, which holds one batch per connection), and a socket that dies
 * fails them exactly as before (ioredis's close handler owns them, not this buffer).
 */
export class TurnCork {
  private corked: Corkable | undefined;
  private scheduled = false;
  private readonly flush = (): void => {
    this.scheduled = false;
    const stream = this.corked;
    this.corked = undefined;
    stream?.uncork();
  };

  constructor(private readonly turnEnd: TurnEnd) {}

  /** Call before each write to `stream` (the connection's current socket). */
  beforeWrite(stream: Corkable | undefined): void {
    if (stream === undefined || stream === this.corked) return;
    // A new socket within the turn (a reconnect): what the old one holds goes out now.
    this.corked?.uncork();
    stream.cork();
    this.corked = stream;
    if (this.scheduled) return;
    this.scheduled = true;
    this.turnEnd(this.flush);
  }
}

/**
 * The turn ends at `setImmediate`, the check phase of the loop iteration that issued the commands,
 * rather than at a `process.nextTick` or a microtask: one iteration's poll phase runs the read
 * callbacks of every client connection that had data, and each request's handler reaches Redis
 * after its own chain of microtasks; a tick or microtask boundary would end a "turn" per connection
 * (or earlier), the check phase ends it once for all of them. It costs no round trip: the replies
 * can only be read in the next iteration's poll phase either way.
 */
export const loopIterationEnd: TurnEnd = (callback) => void setImmediate(callback);

type SendCommand = Redis['sendCommand'];

/** Coalesces one connection's writes per turn (see `TurnCork`); idempotent per connection. */
function coalesceConnection(redis: Redis, turnEnd: TurnEnd): void {
  if (Object.hasOwn(redis, 'sendCommand')) return;
  const cork = new TurnCork(turnEnd);
  // ioredis's own method, from the prototype (the instance has none of its own yet).
  const send = Reflect.get(Object.getPrototypeOf(redis) as object, 'sendCommand') as SendCommand;
  // Every write of ioredis goes through sendCommand (a pipeline's too: it sends each command into
  // its own buffer, then writes that buffer to the socket in the same call stack), so corking here
  // catches them all. `stream` is the socket of the connection's current connect.
  const coalescing: SendCommand = function (this: Redis, command, stream) {
    cork.beforeWrite((this as unknown as { stream?: Corkable }).stream);
    return send.call(this, command, stream);
  };
  redis.sendCommand = coalescing;
}

/**
 * Coalesces the writes of a client per event-loop turn: the single connection of a `Redis`, or each
 * node's connection of a `Cluster` (one socket per node, so one write per node per turn), including
 * the nodes it connects to later (slot map changes, failovers).
 */
export function coalesceWrites(client: RedisClient, turnEnd: TurnEnd = loopIterationEnd): void {
  if (!(client instanceof Cluster)) return coalesceConnection(client, turnEnd);
  client.on('+node', (node: Redis) => coalesceConnection(node, turnEnd));
  for (const node of client.nodes('all')) coalesceConnection(node, turnEnd);
}
