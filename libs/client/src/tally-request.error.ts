import type { TallyDenyReason, TallyFieldError } from './client.types';

/**
 * Tally refused the request itself (400, 401, 403, 404…): a bug or misconfiguration of the caller,
 * never a quota answer, so it is thrown rather than returned. 409, 413 and 429 are results.
 */
export class TallyRequestError extends Error {
  override readonly name = 'TallyRequestError';

  constructor(
    /** HTTP status Tally answered (an invalid batch item: 400). */
    readonly status: number,
    /** Stable machine code (`request.invalid`, `selector.identity_missing`, `auth.missing`…). */
    readonly code: string,
    message: string,
    /** The field errors of an invalid request; empty otherwise. */
    readonly errors: readonly TallyFieldError[] = [],
    /** The deny reason when Tally decided the request was unidentifiable (`selector_identity_*`). */
    readonly reason: TallyDenyReason | null = null,
  ) {
    super(message);
  }
}
