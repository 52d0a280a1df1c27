import { channel } from 'node:diagnostics_channel';
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { releaseClosedStreams } from './release-ended-calls';

const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
const created = channel('http2.server.stream.created');

/** A writable stream with a listener that holds 1 KB, as a server's listeners hold a call. */
function streamHolding(i: number): Writable {
  const stream = new Writable({ write: (_chunk, _encoding, done) => done() });
  const payload = `${i}`.padEnd(1024, '.');
  stream.on('finish', () => payload.length);
  return stream;
}

describe('releaseClosedStreams', () => {
  it('drops a closed stream listeners after the close, keeping one that ignores errors', async () => {
    releaseClosedStreams();
    const stream = streamHolding(1);
    created.publish({ stream });
    const seen: string[] = [];
    stream.on('close', () => seen.push('close listener ran'));
    stream.emit('close');
    expect(seen).toEqual(['close listener ran']);
    expect(stream.listenerCount('finish')).toBe(1);
    await nextTurn();
    expect(stream.eventNames()).toEqual(['error']);
    expect(() => stream.emit('error', new Error('late'))).not.toThrow();
  });

  it('leaves a stream that no HTTP/2 server created as it is', async () => {
    releaseClosedStreams();
    const stream = streamHolding(2);
    stream.emit('close');
    await nextTurn();
    expect(stream.listenerCount('finish')).toBe(1);
  });
});
