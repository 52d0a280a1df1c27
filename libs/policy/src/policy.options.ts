export interface PolicyModuleOptions {
  /** Path of the policy file (`TALLY_POLICIES`, default `config/policies.yaml`). */
  readonly path: string;
  /** Reload when the file changes on disk. Off for one-shot tools such as the CLI. */
  readonly watch: boolean;
  /** Quiet time after the last file event before reloading; editors save in several steps. Default 100. */
  readonly debounceMs?: number;
  /** Stamps `PolicySet.loadedAt`. Default `Date.now`. */
  readonly clock?: () => number;
}
