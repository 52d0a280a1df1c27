/**
 * @tally/errors — the error contract of every Tally HTTP API: the code vocabulary (`ERROR_CODES`,
 * each code with its statuses and meaning), `ApiError` and the problem bodies (`problemOf`,
 * `sendProblem`, `logProblem`).
 *
 * Does NOT own:
 * - the error body's shape (libs/api-contract `ErrorBody`);
 * - the Nest exception filter and the HTTP app that answers with these (@tally/http);
 * - a decision's status (`HTTP_STATUS_OF`, @tally/http) or its gRPC mapping (@tally/envoy-rls).
 */
export { ApiError, type ErrorBody, type FieldError } from './api-error';
export { ERROR_CODES, type ErrorCode, isErrorCode } from './error-codes';
export { logProblem, type Problem, problemOf, sendProblem } from './problem';
