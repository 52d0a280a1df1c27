import { type ArgumentsHost, Catch, type ExceptionFilter, Logger } from '@nestjs/common';
import { type FastifyReply, type FastifyRequest } from 'fastify';
import { logProblem, problemOf, sendProblem } from '@tally/errors';

/**
 * Every error of a Nest-routed handler leaves as `{code, message, errors?}` (see `problemOf`); a 5xx
 * that is a bug is logged with its stack, never shown to the caller.
 */
@Catch()
export class ProblemFilter implements ExceptionFilter {
  private readonly logger = new Logger('http');

  catch(exception: unknown, host: ArgumentsHost): void {
    const problem = problemOf(exception);
    const http = host.switchToHttp();
    logProblem(this.logger, exception, problem, http.getRequest<FastifyRequest | undefined>()?.id);
    sendProblem(http.getResponse<FastifyReply>(), problem);
  }
}
