import { STATUS_CODES, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { type Socket } from 'node:net';
import { type Problem, problemOf } from '@tally/errors';

/**
 * Answers what Node's HTTP server refuses before Fastify sees a request — a parse error (bad request
 * line, header or framing), headers over 16 KiB, a request past its deadline — in the error contract
 * instead of Fastify's `{"error":"Bad Request","message":"Client Error"}`, then closes the connection
 * (the parser cannot resynchronise). Fastify's `clientErrorHandler`.
 */
export function answerClientError(error: Error & { code?: string }, socket: Socket): void {
  // A reset connection has no one to answer; a destroyed one no way to.
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  // As Node does: never write into a response already under way on this connection.
  const inFlight = (socket as Socket & { _httpMessage?: { headersSent?: boolean } | null })._httpMessage;
  if (socket.writable && !inFlight?.headersSent) socket.write(rawResponse(problemOf(error)));
  socket.destroy();
}

/**
 * What Node answers itself, with an empty body, on events the app may take over: an `Expect` other
 * than `100-continue` (417), and `CONNECT`, which it would drop without an answer.
 */
export function answerServerEvents(server: Server): void {
  server.on('checkExpectation', (_request: IncomingMessage, response: ServerResponse) => {
    const problem = problemOf({ statusCode: 417, message: 'expectation failed' });
    const body = JSON.stringify(problem.body);
    response.writeHead(problem.status, {
      'content-type': 'application/json; charset=utf-8',
      'content-length': Buffer.byteLength(body),
    });
    response.end(body);
  });
  server.on('connect', (_request: IncomingMessage, socket: Socket) => {
    const problem: Problem = {
      status: 405,
      body: { code: 'route.method_not_allowed', message: 'this route does not take this method' },
    };
    socket.end(rawResponse(problem));
  });
}

function rawResponse(problem: Problem): string {
  const body = JSON.stringify(problem.body);
  return (
    `HTTP/1.1 ${problem.status} ${STATUS_CODES[problem.status] ?? ''}\r\n` +
    'Content-Type: application/json; charset=utf-8\r\n' +
    `Content-Length: ${Buffer.byteLength(body)}\r\n` +
    'Connection: close\r\n\r\n' +
    body
  );
}
