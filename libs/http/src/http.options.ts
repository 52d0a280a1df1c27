export interface HttpOptions {
  /** `bearer`: callers present one of `callerTokens`, control endpoints the `adminToken`. `none`: open (local only). */
  readonly auth: 'bearer' | 'none';
  readonly callerTokens: readonly string[];
  readonly adminToken?: string;
  /** Requests in flight above which new ones are shed with 503 `server.overloaded`. */
  readonly maxInflight: number;
}
