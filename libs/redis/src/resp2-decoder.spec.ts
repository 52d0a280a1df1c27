import { seededRandom } from '@tally/testing';
import { describe, expect, it } from 'vitest';
import { IoredisDecoder, Resp2Decoder } from './resp2-decoder';

/** ioredis's RESP2-compatible type mapping (DataHandler's `legacyTypeMapping`). */
const LEGACY = {
  43: Buffer,
  36: Buffer,
  61: Buffer,
  40: String,
  44: Buffer,
  35: Number,
  37: Array,
  126: Array,
};
const STRING_NUMBERS = { ...LEGACY, 58: String, 44: String };

type Event = ['reply' | 'error' | 'push', unknown];

function decodeAll(
  Decoder: typeof IoredisDecoder,
  chunks: readonly Buffer[],
  mapping: Record<number, unknown>,
): Event[] {
  const events: Event[] = [];
  const decoder = new Decoder({
    getTypeMapping: () => mapping,
    onReply: (reply) => events.push(['reply', plain(reply)]),
    onErrorReply: (error) => events.push(['error', plain(error)]),
    onPush: (reply) => events.push(['push', plain(reply)]),
  });
  for (const chunk of chunks) decoder.write(chunk);
  return events;
}

/** Comparable: Buffers as `buf:<text>`, errors as `<name>:<message>` with their class. */
function plain(value: unknown): unknown {
  if (Buffer.isBuffer(value)) return `buf:${value.toString('latin1')}`;
  if (value instanceof Error) return `${value.constructor.name}/${value.name}:${value.message}`;
  if (Array.isArray(value)) return value.map(plain);
  return value;
}

const TEXTS = ['', 'OK', 'tally:v1:{s7}:outbox', 'é ü 漢字', '1733212345678-0', 'a\r\nb', '-1', '{"v":1}'];

function element(rand: () => number, depth: number, top: boolean): string {
  const pick = rand();
  const text = TEXTS[Math.floor(rand() * TEXTS.length)] ?? '';
  if (pick < 0.25) return `$${Buffer.byteLength(text)}\r\n${text}\r\n`;
  if (pick < 0.32) return '$-1\r\n';
  if (pick < 0.45) {
    const n = Math.floor(rand() * 2 ** 40) * (rand() < 0.3 ? -1 : 1);
    return `:${rand() < 0.1 ? `+${Math.abs(n)}` : n}\r\n`;
  }
  if (pick < 0.52) return `+${text.replace(/\r\n/g, '')}\r\n`;
  if (pick < 0.58 && !top) return `-ERR ${text.replace(/\r\n/g, '')}\r\n`;
  if (pick < 0.62) return '*-1\r\n';
  if (depth > 3) return ':7\r\n';
  const length = Math.floor(rand() * 5);
  let out = `*${length}\r\n`;
  for (let i = 0; i < length; i++) out += element(rand, depth + 1, false);
  return out;
}

function stream(seed: number): Buffer {
  const rand = seededRandom(seed);
  let out = '';
  const replies = 1 + Math.floor(rand() * 6);
  for (let r = 0; r < replies; r++)
    out += rand() < 0.1 ? `-WRONGTYPE Operation ${r}\r\n` : element(rand, 0, true);
  return Buffer.from(out, 'utf8');
}

function cut(bytes: Buffer, rand: () => number): Buffer[] {
  const chunks: Buffer[] = [];
  let at = 0;
  while (at < bytes.length) {
    const size = rand() < 0.3 ? 1 : 1 + Math.floor(rand() * 40);
    chunks.push(bytes.subarray(at, at + size));
    at += size;
  }
  return chunks;
}

describe('Resp2Decoder', () => {
  it('decodes generated RESP2 replies, cut anywhere, as ioredis does', () => {
    for (let seed = 1; seed <= 400; seed++) {
      const bytes = stream(seed);
      const chunks = cut(bytes, seededRandom(seed * 7919));
      for (const mapping of [LEGACY, STRING_NUMBERS]) {
        const expected = decodeAll(IoredisDecoder, [bytes], mapping);
        expect(decodeAll(Resp2Decoder, [bytes], mapping), `seed ${seed}, one chunk`).toEqual(expected);
        expect(decodeAll(Resp2Decoder, chunks, mapping), `seed ${seed}, cut`).toEqual(expected);
      }
    }
  });

  it('decodes a reply cut at every byte boundary', () => {
    const bytes = Buffer.from(
      '*2\r\n*2\r\n$20\r\ntally:v1:{s7}:outbox\r\n*1\r\n*2\r\n$15\r\n1733212345678-0\r\n*2\r\n$1\r\np\r\n$7\r\n{"v":1}\r\n*-1\r\n:-42\r\n-ERR boom\r\n$0\r\n\r\n',
    );
    const expected = decodeAll(IoredisDecoder, [bytes], LEGACY);
    expect(expected.map(([kind]) => kind)).toEqual(['reply', 'reply', 'error', 'reply']);
    for (let a = 1; a < bytes.length; a++) {
      for (const b of [a + 1, a + 7, bytes.length]) {
        const chunks = [bytes.subarray(0, a), bytes.subarray(a, b), bytes.subarray(b)].filter(
          (c) => c.length,
        );
        expect(decodeAll(Resp2Decoder, chunks, LEGACY), `cut at ${a}, ${b}`).toEqual(expected);
      }
    }
  });

  it('gives strings as views of the bytes received, not copies', () => {
    const bytes = Buffer.from('*2\r\n$3\r\nabc\r\n+OK\r\n');
    const replies: unknown[] = [];
    new Resp2Decoder({
      getTypeMapping: () => LEGACY,
      onReply: (reply) => replies.push(reply),
      onErrorReply: () => undefined,
      onPush: () => undefined,
    }).write(bytes);
    const [abc, ok] = replies[0] as Buffer[];
    expect([abc?.toString(), ok?.toString()]).toEqual(['abc', 'OK']);
    expect(abc?.buffer).toBe(bytes.buffer);
  });

  it('hands a connection that answers in RESP3 to ioredis for the rest of its stream', () => {
    const bytes = Buffer.from(
      '%2\r\n+server\r\n+redis\r\n+proto\r\n:3\r\n#t\r\n,1.5\r\n*2\r\n_\r\n:1\r\n>2\r\n+a\r\n+b\r\n',
    );
    const mapping = { 43: Buffer, 36: Buffer, 61: Buffer, 40: String, 126: Array };
    for (const chunks of [[bytes], cut(bytes, seededRandom(3))]) {
      expect(decodeAll(Resp2Decoder, chunks, mapping)).toEqual(decodeAll(IoredisDecoder, [bytes], mapping));
    }
  });

  it('refuses a RESP3 type inside a RESP2 reply, as a protocol error', () => {
    const decoder = new Resp2Decoder({
      getTypeMapping: () => LEGACY,
      onReply: () => undefined,
      onErrorReply: () => undefined,
      onPush: () => undefined,
    });
    expect(() => decoder.write(Buffer.from('*1\r\n#t\r\n'))).toThrow(/Unknown RESP type 35/);
  });
});
