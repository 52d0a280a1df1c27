import { type TallyConfig } from '@tally/config';

export interface HttpOptions {
  /** `bearer`: every non-public route needs an accepted token with its role. `none`: open (local only). */
  readonly auth: 'bearer' | 'none';
  /** `TALLY_API_TOKENS`: the simple form's caller tokens (decide + query, every tenant). */
  readonly callerTokens: readonly string[];
  /** `TALLY_ADMIN_TOKEN`: the simple form's admin token (admin only). */
  readonly adminToken?: string;
  /** `TALLY_TOKENS_FILE`: scoped tokens (roles, tenant allow-lists), reloaded live; absent = env only. */
  readonly tokensFile?: string;
  /** Requests in flight above which new ones are shed with 503 `server.overloaded`. */
  readonly maxInflight: number;
}

/** The HTTP options every app derives from its settings, so that no app forgets one (the tokens file). */
export function httpOptionsFrom(config: TallyConfig): HttpOptions {
  return {
    auth: config.auth,
    callerTokens: config.apiTokens ?? [],
    adminToken: config.adminToken,
    tokensFile: config.tokensFile,
    maxInflight: config.maxInflight,
  };
}
