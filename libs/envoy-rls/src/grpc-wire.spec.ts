import { status } from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import { encodeGrpcMessage, frameMessage, parseGrpcTimeout, UnaryMessageReader } from './grpc-wire';

const PATH = '/pkg.Service/Method';
const frame = (bytes: number[], flag = 0): Buffer => {
  const message = frameMessage(Buffer.from(bytes));
  message[0] = flag;
  return message;
};

describe(UnaryMessageReader.name, () => {
  it('reads one message delivered in one chunk', () => {
    const sut = new UnaryMessageReader(100, PATH);

    expect(sut.push(frame([1, 2, 3]))).toBeUndefined();
    expect(sut.finish()).toEqual({ compressed: false, message: Buffer.from([1, 2, 3]) });
  });

  it('reads a message whose prefix and bytes are split across chunks at every offset', () => {
    const whole = frame([9, 8, 7, 6, 5, 4]);
    for (let cut = 1; cut < whole.length; cut++) {
      const sut = new UnaryMessageReader(100, PATH);

      expect([sut.push(whole.subarray(0, cut)), sut.push(whole.subarray(cut))]).toEqual([
        undefined,
        undefined,
      ]);
      expect(sut.finish()).toEqual({ compressed: false, message: Buffer.from([9, 8, 7, 6, 5, 4]) });
    }
  });

  it('refuses a message announced above the limit from its prefix, before its bytes arrive', () => {
    const sut = new UnaryMessageReader(10, PATH);
    const prefix = Buffer.from([0, 0, 0, 0, 11]);

    expect(sut.push(prefix)).toEqual({
      code: status.RESOURCE_EXHAUSTED,
      details: 'Received message larger than max (11 vs 10)',
    });
    expect(sut.received).toBe(5);
  });

  it('takes a message exactly at the limit, and an empty message', () => {
    const atLimit = new UnaryMessageReader(3, PATH);
    const empty = new UnaryMessageReader(3, PATH);

    atLimit.push(frame([1, 2, 3]));
    empty.push(frame([]));

    expect(atLimit.finish()).toEqual({ compressed: false, message: Buffer.from([1, 2, 3]) });
    expect(empty.finish()).toEqual({ compressed: false, message: Buffer.alloc(0) });
  });

  it('refuses bytes after the first message: a unary call has one', () => {
    const sut = new UnaryMessageReader(100, PATH);

    expect(sut.push(Buffer.concat([frame([1]), Buffer.from([0])]))).toEqual({
      code: status.UNIMPLEMENTED,
      details: `Received a second request message for unary method ${PATH}`,
    });
  });

  it('says why there is no message at the end: none sent, or cut inside its prefix or bytes', () => {
    const none = new UnaryMessageReader(100, PATH);
    const inPrefix = new UnaryMessageReader(100, PATH);
    const inBytes = new UnaryMessageReader(100, PATH);
    inPrefix.push(Buffer.from([0, 0, 0]));
    inBytes.push(frame([1, 2, 3, 4]).subarray(0, 7));

    expect([none.finish(), inPrefix.finish(), inBytes.finish()]).toEqual([
      { code: status.UNIMPLEMENTED, details: `Received no request message for unary method ${PATH}` },
      { code: status.INTERNAL, details: 'The request ended inside its message (3 of 5 bytes)' },
      { code: status.INTERNAL, details: 'The request ended inside its message (7 of 9 bytes)' },
    ]);
  });

  it('reports the compressed flag, and refuses a flag that is neither 0 nor 1', () => {
    const compressed = new UnaryMessageReader(100, PATH);
    const bad = new UnaryMessageReader(100, PATH);
    compressed.push(frame([1], 1));
    bad.push(frame([1], 2));

    expect(compressed.finish()).toEqual({ compressed: true, message: Buffer.from([1]) });
    expect(bad.finish()).toEqual({ code: status.INTERNAL, details: 'Invalid compressed flag 2' });
  });
});

describe(frameMessage.name, () => {
  it('prefixes a message with flag 0 and its big-endian length', () => {
    expect(frameMessage(Buffer.alloc(300, 7)).subarray(0, 6)).toEqual(Buffer.from([0, 0, 0, 1, 44, 7]));
  });
});

describe(parseGrpcTimeout.name, () => {
  it.each([
    ['1H', 3_600_000],
    ['2M', 120_000],
    ['20S', 20_000],
    ['250m', 250],
    ['1500u', 2],
    ['1u', 1],
    ['1n', 1],
    ['99999999m', 99_999_999],
  ])('%s → %d ms', (header, ms) => {
    expect(parseGrpcTimeout(header)).toBe(ms);
  });

  it('takes the first of repeated values, and nothing when the header is absent', () => {
    expect(parseGrpcTimeout(['5S', '1S'])).toBe(5000);
    expect(parseGrpcTimeout(undefined)).toBeUndefined();
  });

  it('takes a deadline beyond what a timer holds (≈ 24.8 days) as none, and one just within it', () => {
    expect(parseGrpcTimeout('99999999H')).toBeUndefined();
    expect(parseGrpcTimeout('597H')).toBeUndefined();
    expect(parseGrpcTimeout('596H')).toBe(2_145_600_000);
    expect(parseGrpcTimeout('2147483S')).toBe(2_147_483_000);
  });

  it.each(['', 'S', '10', '10s', '123456789m', '-5S', '1.5S', ' 5S', '5 S'])('refuses %j', (header) => {
    expect(parseGrpcTimeout(header)).toEqual({
      code: status.INTERNAL,
      details: `Invalid grpc-timeout value "${header}"`,
    });
  });
});

describe(encodeGrpcMessage.name, () => {
  it('leaves printable ASCII as it is', () => {
    const text = 'descriptors[0].entries[1].key: "tenant" is already set; retry (5/s) #1';

    expect(encodeGrpcMessage(text)).toBe(text);
  });

  it('percent-encodes %, control characters and UTF-8 bytes, which clients decode back', () => {
    const text = '100% of "tenant-é" ✓\nnext';

    const sut = encodeGrpcMessage(text);

    expect(sut).toBe('100%25 of "tenant-%C3%A9" %E2%9C%93%0Anext');
    expect(decodeURIComponent(sut)).toBe(text);
  });
});
