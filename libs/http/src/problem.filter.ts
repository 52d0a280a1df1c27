import { type ArgumentsHost, Catch, type ExceptionFilter, Logger } from '@nestjs/common';
import { type FastifyReply } from 'fastify';
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
    logProblem(this.logger, exception, problem);
    sendProblem(host.switchToHttp().getResponse<FastifyReply>(), problem);
  }
}
