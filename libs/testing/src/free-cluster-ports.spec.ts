import { createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { freeClusterPorts } from './free-cluster-ports';

function bind(port: number): Promise<() => Promise<void>> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve(() => new Promise((done) => server.close(() => done()))));
  });
}

describe(freeClusterPorts.name, () => {
  it('gives distinct ports that can be bound, each with its bus port (+10000)', async () => {
    const sut = await freeClusterPorts(6);

    expect(new Set(sut).size).toBe(6);
    const closers = await Promise.all(sut.flatMap((p) => [bind(p), bind(p + 10_000)]));
    await Promise.all(closers.map((c) => c()));
  });
});
