import { Injectable, type OnModuleInit } from '@nestjs/common';
import { type PolicyReloads, type Wire } from '@tally/api-contract';
import { gatherEverywhere, offerGather } from '@tally/cluster';
import { PolicyStore, type ReloadResult } from '@tally/policy';

/** One remembered reload, as the API answers it. */
export type ReloadEntry = PolicyReloads['reloads'][number];
type Entry = ReloadEntry;

/** How many reloads are remembered: enough for "what happened to my last rollouts", bounded memory. */
export const RELOAD_HISTORY = 20;

/** The IPC topic under which each worker offers its history to the others (`gatherEverywhere`). */
const TOPIC = 'policy-reloads';
/**
 * One reload seen by several workers: every worker runs a shared reload (and sees a file change), each
 * a few milliseconds apart. Entries alike within this span are one reload.
 */
export const SAME_RELOAD_MS = 5_000;

/**
 * The last reloads of the policy file and their outcome, rejected ones with every error, for the
 * console's Policies page. In memory, per process: a restart starts afresh (the boot load is not a
 * reload), and the metrics (`tally_policy_reloads_total`) remain the durable count. With several
 * workers the answer is the workers' histories merged (`mergeReloadHistories`), so whichever worker
 * answers, the page shows the same list.
 */
@Injectable()
export class PolicyReloadHistory implements OnModuleInit {
  private readonly entries: Entry[] = [];

  constructor(private readonly store: PolicyStore) {}

  onModuleInit(): void {
    this.store.onReload((result, trigger) => this.record(result, trigger, Date.now()));
    offerGather(TOPIC, () => this.entries);
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

  /** This process' own, newest first. */
  own(): Wire<PolicyReloads> {
    return { reloads: this.entries.map((e) => ({ ...e, errors: [...e.errors] })) };
  }

  /** Every worker's, merged, newest first (this process' alone without workers). */
  async list(): Promise<Wire<PolicyReloads>> {
    const all = await gatherEverywhere(TOPIC, () => this.entries);
    const histories = all.map((w) => (Array.isArray(w.value) ? (w.value as Entry[]) : []));
    return { reloads: mergeReloadHistories(histories) };
  }
}

/**
 * The workers' histories as one, newest first, at most RELOAD_HISTORY: an entry alike in trigger,
 * outcome, version and errors to one already kept from another worker within SAME_RELOAD_MS is the
 * same reload, kept once at its earliest time.
 */
export function mergeReloadHistories(histories: readonly (readonly Entry[])[]): Entry[] {
  const what = (e: Entry) => JSON.stringify([e.trigger, e.outcome, e.version, e.errors]);
  const kept: { entry: Entry; ms: number; from: Set<number> }[] = [];
  const oldestFirst = histories
    .flatMap((h, worker) => h.map((entry) => ({ entry, ms: Date.parse(entry.at), worker })))
    .sort((a, b) => a.ms - b.ms);
  for (const { entry, ms, worker } of oldestFirst) {
    const same = kept.find(
      (k) => !k.from.has(worker) && what(k.entry) === what(entry) && ms - k.ms <= SAME_RELOAD_MS,
    );
    if (same) same.from.add(worker);
    else kept.push({ entry: { ...entry, errors: [...entry.errors] }, ms, from: new Set([worker]) });
  }
  return kept
    .reverse()
    .slice(0, RELOAD_HISTORY)
    .map((k) => k.entry);
}
