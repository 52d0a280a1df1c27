import { createServer } from 'node:net';

/**
 * A loopback port nobody listens on right now: bound to port 0, then released. Another process may
 * take it before the caller binds it; on a test machine that race is rare enough to accept.
 */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() =>
        typeof address === 'object' && address !== null
          ? resolve(address.port)
          : reject(new Error('the probe server has no TCP address')),
      );
    });
  });
}
