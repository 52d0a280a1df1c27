import { HttpException } from '@nestjs/common';
import type { ErrorBody as WireErrorBody, FieldError as WireFieldError } from '@tally/api-contract';

/** One problem with a request field, with its path (`selectors.tenant`, `requests[3].cost`). */
export type FieldError = Readonly<WireFieldError>;

/**
 * The error body of every Tally HTTP API (defined in @tally/api-contract): a stable machine `code`
 * (callers branch on it, never on `message`), a human message, and the field errors when the input
 * was invalid.
 */
export type ErrorBody = Readonly<Omit<WireErrorBody, 'errors'>> & { readonly errors?: readonly FieldError[] };

export class ApiError extends HttpException {
  constructor(status: number, code: string, message: string, errors?: readonly FieldError[]) {
    super({ code, message, ...(errors ? { errors } : {}) } satisfies ErrorBody, status);
  }
}
