import type { AuthOptions } from '@tally/auth';
import { type TallyConfig } from '@tally/config';

export interface HttpOptions extends AuthOptions {
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
