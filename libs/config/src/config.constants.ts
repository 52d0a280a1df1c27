/** DI token of the validated, frozen {@link TallyConfig} instance. */
export const TALLY_CONFIG = Symbol('TALLY_CONFIG');
