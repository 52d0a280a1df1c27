import http from 'node:http';
import https from 'node:https';
import type { TallyClientFailure } from './client.types';
import { pickRateLimitHeaders } from './rate-limit.headers';

/** One complete answer: status, the relayable headers, the parsed JSON body (undefined if none). */
export interface RawResponse {
  readonly status: number;
  readonly rateLimitHeaders: Record<string, string>;
  readonly body: unknown;
}

/** Tally gave no answer. `retryable` marks a failure where the request cannot have been processed twice. */
export class TransportFailure extends Error {
  constructor(
    readonly failure: TallyClientFailure,
    readonly retryable: boolean,
  ) {
    super(failure.message);
  }
}

/** Errors of a connection that failed or broke before an answer: a retry may reach a healthy socket. */
const CONNECTION_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ECONNABORTED',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
  'ENOTFOUND',
]);

/**
 * JSON over `node:http` with a keep-alive agent: on the hot path a TCP (and TLS) handshake per call
 * would cost more than the decision itself.
 */
export class HttpTransport {
  private readonly agent: http.Agent;
  private readonly base: URL;

  constructor(baseUrl: string, maxSockets: number) {
    this.base = new URL(baseUrl.endsWith('/') ? baseUrl : `${baseUrl}/`);
    const Agent = this.base.protocol === 'https:' ? https.Agent : http.Agent;
    this.agent = new Agent({ keepAlive: true, maxSockets });
  }

  /**
   * Rejects with `TransportFailure` when no answer arrived by `deadline` (epoch ms) or the connection
   * failed, and with the signal's reason when the caller aborted.
   */
  post(
    path: string,
    token: string,
    payload: unknown,
    deadline: number,
    signal?: AbortSignal,
  ): Promise<RawResponse> {
    return this.send('POST', path, token, payload, deadline, signal);
  }

  /** Any method; `payload` undefined sends no body (GET, DELETE). */
  send(
    method: 'GET' | 'POST' | 'PUT' | 'DELETE',
    path: string,
    token: string,
    payload: unknown,
    deadline: number,
    signal?: AbortSignal,
  ): Promise<RawResponse> {
    const url = new URL(path, this.base);
    const data = payload === undefined ? undefined : Buffer.from(JSON.stringify(payload));
    const request = url.protocol === 'https:' ? https.request : http.request;
    return new Promise<RawResponse>((resolve, reject) => {
      if (signal?.aborted) {
        reject(abortReason(signal));
        return;
      }
      let settled = false;
      const finish = (settle: () => void): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        settle();
      };
      const fail = (error: Error, kind: TallyClientFailure['kind'], retryable: boolean): void => {
        finish(() => reject(new TransportFailure({ kind, message: error.message }, retryable)));
      };
      const req = request(url, {
        method,
        agent: this.agent,
        headers: {
          authorization: `Bearer ${token}`,
          ...(data !== undefined && { 'content-type': 'application/json', 'content-length': data.length }),
          accept: 'application/json',
        },
      });
      const timer = setTimeout(
        () => {
          fail(new Error(`no answer within the deadline`), 'timeout', false);
          req.destroy();
        },
        Math.max(0, deadline - Date.now()),
      );
      const onAbort = (): void => {
        finish(() => reject(abortReason(signal)));
        req.destroy();
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      req.on('error', (error: NodeJS.ErrnoException) => {
        fail(error, 'connection', error.code !== undefined && CONNECTION_CODES.has(error.code));
      });
      req.on('response', (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('error', (error) => fail(error, 'connection', false));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let body: unknown;
          try {
            body = text === '' ? undefined : JSON.parse(text);
          } catch {
            body = text;
          }
          const status = res.statusCode ?? 0;
          finish(() => resolve({ status, rateLimitHeaders: pickRateLimitHeaders(res.headers), body }));
        });
      });
      req.end(data);
    });
  }

  /** Destroys every socket, in-flight calls included: for shutdown, after the last call. */
  close(): void {
    this.agent.destroy();
  }
}

/** The caller's cancellation as it gave it (`AbortSignal.timeout()` gives a `TimeoutError`). */
function abortReason(signal: AbortSignal | undefined): Error {
  const reason: unknown = signal?.reason;
  return reason instanceof Error ? reason : new DOMException('the call was aborted', 'AbortError');
}
