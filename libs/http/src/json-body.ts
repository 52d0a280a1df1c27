import { type FastifyInstance } from 'fastify';
import { ApiError } from '@tally/errors';
import { MAX_JSON_DEPTH, nestsDeeperThan } from './json-depth';

const BLANK = /^\s*$/;

/**
 * JSON is the only request body the Tally APIs speak. Fastify's own parsers are replaced so that:
 * - any other media type (text/plain, forms, none with a body) is 415 `request.unsupported_media_type`
 *   instead of a string or form object reaching the validators as if it were input;
 * - an empty or unparsable JSON body is 400 `request.malformed_json`. The parser fails with an
 *   `ApiError`, which Nest passes to the problem filter untouched; Fastify's own errors reach it only
 *   as a bare status and message, without their codes.
 * - a body nested deeper than `MAX_JSON_DEPTH` is 400 `request.invalid`, judged on the text before
 *   parsing, so no recursive walk downstream ever sees caller-controlled depth.
 * Prototype poisoning (`__proto__`, `constructor.prototype`) is refused like malformed JSON.
 */
export function installJsonBody(fastify: FastifyInstance, bodyLimit: number): void {
  const parseJson = fastify.getDefaultJsonParser('error', 'error');
  fastify.removeAllContentTypeParsers();
  fastify.addContentTypeParser(
    'application/json',
    { parseAs: 'string', bodyLimit },
    (request, body, done) => {
      const text = body as string;
      // A test, not `trim()`: no copy of every body just to see that it is not blank.
      if (BLANK.test(text)) {
        done(new ApiError(400, 'request.malformed_json', 'the JSON body is empty'), undefined);
        return;
      }
      if (nestsDeeperThan(text, MAX_JSON_DEPTH)) {
        done(
          new ApiError(400, 'request.invalid', `the JSON body nests deeper than ${MAX_JSON_DEPTH} levels`),
          undefined,
        );
        return;
      }
      void parseJson(request, text, (error, value) => {
        if (error) done(new ApiError(400, 'request.malformed_json', 'the body is not valid JSON'), undefined);
        else done(null, value);
      });
    },
  );
}
