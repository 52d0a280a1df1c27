import { HttpException } from '@nestjs/common';

/** One problem with a request field, with its path (`selectors.tenant`, `requests[3].cost`). */
export interface FieldError {
  readonly path: string;
  readonly message: string;
}

/**
 * The error body of every Tally HTTP API: a stable machine `code` (callers branch on it, never on
 * `message`), a human message, and the field errors when the input was invalid.
 */
export interface ErrorBody {
  readonly code: string;
  readonly message: string;
  readonly errors?: readonly FieldError[];
}

export class ApiError extends HttpException {
  constructor(status: number, code: string, message: string, errors?: readonly FieldError[]) {
    super({ code, message, ...(errors ? { errors } : {}) } satisfies ErrorBody, status);
  }
}
