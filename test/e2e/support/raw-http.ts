import { connect } from 'node:net';

/** What came back on a raw socket: the status line's code, the headers and the body text. */
export interface RawResponse {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
  /** Everything the server sent, as text: leak checks look at all of it. */
  readonly text: string;
}

/**
 * Sends `request` byte for byte on a fresh TCP connection and reads until the server closes it or
 * one whole response (by its content-length, or chunked) has arrived. For requests no HTTP client
 * library will send: malformed request lines, bad escapes, contradicting length headers. Fails when
 * nothing complete arrives within `timeoutMs`, so a hang is a failure, never a pass.
 */
export function rawRequest(port: number, request: string | Buffer, timeoutMs = 10_000): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port });
    const chunks: Buffer[] = [];
    let settled = false;
    const finish = (error?: Error): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      if (error) return reject(error);
      const parsed = parseResponse(Buffer.concat(chunks));
      if (parsed) resolve(parsed);
      else
        reject(
          new Error(
            `no complete HTTP response; got ${JSON.stringify(Buffer.concat(chunks).toString('latin1').slice(0, 300))}`,
          ),
        );
    };
    const timer = setTimeout(() => finish(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
    socket.on('data', (d: Buffer) => {
      chunks.push(d);
      if (parseResponse(Buffer.concat(chunks))) finish();
    });
    socket.on('end', () => finish());
    socket.on('close', () => finish());
    // A server may reset a connection it refuses after answering; what arrived before still counts.
    socket.on('error', () => finish());
    socket.write(request);
  });
}

function parseResponse(raw: Buffer): RawResponse | undefined {
  const text = raw.toString('latin1');
  const headEnd = text.indexOf('\r\n\r\n');
  if (headEnd < 0) return undefined;
  const [statusLine, ...lines] = text.slice(0, headEnd).split('\r\n');
  const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine)?.[1]);
  if (!Number.isInteger(status)) return undefined;
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  const rest = raw.subarray(Buffer.byteLength(text.slice(0, headEnd + 4), 'latin1'));
  const length = headers['content-length'];
  if (length !== undefined) {
    if (rest.length < Number(length)) return undefined;
    return { status, headers, body: rest.subarray(0, Number(length)).toString('utf8'), text };
  }
  if (headers['transfer-encoding'] === 'chunked') {
    const body = dechunk(rest);
    return body === undefined ? undefined : { status, headers, body, text };
  }
  return { status, headers, body: rest.toString('utf8'), text };
}

function dechunk(raw: Buffer): string | undefined {
  const parts: Buffer[] = [];
  let at = 0;
  for (;;) {
    const lineEnd = raw.indexOf('\r\n', at);
    if (lineEnd < 0) return undefined;
    const size = Number.parseInt(raw.subarray(at, lineEnd).toString('latin1'), 16);
    if (!Number.isInteger(size)) return undefined;
    if (size === 0) return Buffer.concat(parts).toString('utf8');
    if (raw.length < lineEnd + 2 + size) return undefined;
    parts.push(raw.subarray(lineEnd + 2, lineEnd + 2 + size));
    at = lineEnd + 2 + size + 2;
  }
}
