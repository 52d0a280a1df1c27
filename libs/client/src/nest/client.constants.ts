/** Route metadata key of `@Quota`. */
export const QUOTA_METADATA = Symbol('TALLY_QUOTA');
/** DI token of the `TallyModule` options. */
export const TALLY_OPTIONS = Symbol('TALLY_OPTIONS');
