/** The settings authentication needs, derived by each app from its config (`httpOptionsFrom`). */
export interface AuthOptions {
  /** `bearer`: every non-public route needs an accepted token with its role. `none`: open (local only). */
  readonly auth: 'bearer' | 'none';
  /** `TALLY_API_TOKENS`: the simple form's caller tokens (decide + query, every tenant). */
  readonly callerTokens: readonly string[];
  /** `TALLY_ADMIN_TOKEN`: the simple form's admin token (admin only). */
  readonly adminToken?: string;
  /** `TALLY_TOKENS_FILE`: scoped tokens (roles, tenant allow-lists), reloaded live; absent = env only. */
  readonly tokensFile?: string;
}
