import { type IncomingMessage } from 'node:http';
import { type FastifyReply, type FastifyRequest } from 'fastify';
import { type Problem, sendProblem } from '@tally/errors';

/**
 * Answers a request refused before its body was read (no token, no route, shed, draining). When a
 * body is still on its way the connection closes after the answer: keeping it alive would mean
 * reading and discarding whatever a stranger chooses to trickle, for as long as the request deadline.
 */
export function refuse(request: FastifyRequest, reply: FastifyReply, problem: Problem): void {
  if (bodyPending(request.raw)) void reply.header('connection', 'close');
  sendProblem(reply, problem);
}

function bodyPending(raw: IncomingMessage): boolean {
  if (raw.complete) return false;
  const length = raw.headers['content-length'];
  return raw.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}
