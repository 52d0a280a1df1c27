import { createServer, type Server } from 'node:net';

/** Redis Cluster's bus listens on the node's port + 10000 (cluster-port 0 means that default). */
const BUS_OFFSET = 10_000;
/** Below the ephemeral range (32768+) with room for the bus port, so both stay under 65536. */
const LOW = 20_000;
const HIGH = 30_000;

/**
 * `count` loopback ports for Redis Cluster nodes, each free together with its bus port (+10000), so
 * a test's throwaway cluster never collides with another suite's or a developer's local cluster
 * (`TALLY_STACK=cluster`). Held while probing, then released together; another process may take one
 * before the caller binds it, a race rare enough on a test machine.
 */
export async function freeClusterPorts(count: number): Promise<number[]> {
  const held: Server[] = [];
  const ports: number[] = [];
  try {
    for (let attempt = 0; ports.length < count && attempt < 1_000; attempt++) {
      const port = LOW + Math.floor(Math.random() * (HIGH - LOW));
      if (ports.includes(port) || ports.some((p) => Math.abs(p - port) === BUS_OFFSET)) continue;
      const node = await tryListen(port);
      if (node === null) continue;
      const bus = await tryListen(port + BUS_OFFSET);
      if (bus === null) {
        await close(node);
        continue;
      }
      held.push(node, bus);
      ports.push(port);
    }
  } finally {
    await Promise.all(held.map(close));
  }
  if (ports.length < count) throw new Error(`found ${ports.length} of ${count} free cluster ports`);
  return ports;
}

function tryListen(port: number): Promise<Server | null> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(null));
    server.listen(port, '127.0.0.1', () => resolve(server));
  });
}

function close(server: Server): Promise<void> {
  return new Promise((resolve) => server.close(() => resolve()));
}
