import { Injectable, type OnModuleInit } from '@nestjs/common';
import { type PolicyReloads, type Wire } from '@tally/api-contract';
import { PolicyStore, type ReloadResult } from '@tally/policy';

type Entry = PolicyReloads['reloads'][number];

/** How many reloads are remembered: enough for "what happened to my last rollouts", bounded memory. */
export const RELOAD_HISTORY = 20;

/**
 * The last reloads of the policy file and their outcome, rejected ones with every error, for the
 * console's Policies page. In memory, per process: a restart starts afresh (the boot load is not a
 * reload), and the metrics (`tally_policy_reloads_total`) remain the durable count.
 */
@Injectable()
export class PolicyReloadHistory implements OnModuleInit {
  private readonly entries: Entry[] = [];

  constructor(private readonly store: PolicyStore) {}

  onModuleInit(): void {
    this.store.onReload((result, trigger) => this.record(result, trigger, Date.now()));
  }

  record(result: ReloadResult, trigger: 'file' | 'request', atMs: number): void {
    const at = new Date(atMs).toISOString();
    this.entries.unshift(
      result.ok
        ? {
            at,
            trigger,
            outcome: result.changed ? 'applied' : 'unchanged',
            version: result.version,
            errors: [],
          }
        : {
            at,
            trigger,
            outcome: 'rejected',
            version: null,
            errors: result.errors.map((e) => ({ path: e.path, message: e.message })),
          },
    );
    this.entries.length = Math.min(this.entries.length, RELOAD_HISTORY);
  }

  /** Newest first. */
  list(): Wire<PolicyReloads> {
    return { reloads: this.entries.map((e) => ({ ...e, errors: [...e.errors] })) };
  }
}
