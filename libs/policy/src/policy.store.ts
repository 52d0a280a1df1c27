import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { Inject, Injectable, Logger, type OnModuleDestroy } from '@nestjs/common';
import { watchFile, type FileWatch } from './file.watcher';
import { compilePolicyFile } from './policy.compiler';
import { POLICY_MODULE_OPTIONS } from './policy.constants';
import type { PolicyModuleOptions } from './policy.options';
import type { PolicyError, PolicySet } from './policy.types';

/** Outcome of one reload. A failed reload leaves the running set in force. */
export type ReloadResult =
  | { readonly ok: true; readonly version: string; readonly changed: boolean }
  | { readonly ok: false; readonly errors: readonly PolicyError[] };
/** `file`: the watcher saw the file change; `request`: someone called `reload()` (API, CLI, test). */
export type ReloadTrigger = 'file' | 'request';
export type ReloadListener = (result: ReloadResult, trigger: ReloadTrigger) => void;

/** Thrown by `load` at boot: the app must not start without a valid policy set. */
export class PolicyLoadError extends Error {
  constructor(
    readonly path: string,
    readonly errors: readonly PolicyError[],
  ) {
    super(`invalid policy file ${path}:\n${errors.map((e) => `  ${e.path}: ${e.message}`).join('\n')}`);
    this.name = PolicyLoadError.name;
  }
}

/**
 * Holds the policy set in force. Swapping is one reference assignment, so a decision sees either the
 * old set or the new one, never a mix. Reloads are serialized so that an older read can never win.
 */
@Injectable()
export class PolicyStore implements OnModuleDestroy {
  private readonly logger = new Logger(PolicyStore.name);
  private readonly listeners = new Set<ReloadListener>();
  private set: PolicySet | undefined;
  private reloading: Promise<unknown> = Promise.resolve();
  private watching: FileWatch | undefined;

  constructor(@Inject(POLICY_MODULE_OPTIONS) private readonly options: PolicyModuleOptions) {}

  /** The set in force. Throws before `load`: reading policies before boot finished is a wiring bug. */
  get current(): PolicySet {
    if (!this.set) throw new Error('PolicyStore: no policy set loaded yet');
    return this.set;
  }

  /** Boot: read and compile the file synchronously; throws `PolicyLoadError` listing every error. */
  load(): PolicySet {
    let text: string;
    try {
      text = readFileSync(this.options.path, 'utf8');
    } catch (e) {
      throw new PolicyLoadError(this.options.path, [readError(e)]);
    }
    const result = compilePolicyFile(text, this.options.clock);
    if (!result.ok) throw new PolicyLoadError(this.options.path, result.errors);
    this.set = result.set;
    return result.set;
  }

  /** Re-read the file; an invalid or unreadable file keeps the running set. Listeners hear every outcome. */
  reload(trigger: ReloadTrigger = 'request'): Promise<ReloadResult> {
    const next = this.reloading.then(() => this.readAndSwap());
    this.reloading = next.catch(() => undefined);
    return next.then((result) => {
      this.emit(result, trigger);
      return result;
    });
  }

  /** Subscribe to reload outcomes (metrics, logs, audit). Returns the unsubscribe function. */
  onReload(listener: ReloadListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Reload on file changes until `close()`. Idempotent. */
  watch(): void {
    if (this.watching) return;
    this.watching = watchFile(
      this.options.path,
      this.options.debounceMs ?? 100,
      () => void this.reload('file'),
      (e) => this.logger.warn(`watching ${this.options.path} failed; reload with the API: ${e.message}`),
    );
  }

  close(): void {
    this.watching?.close();
    this.watching = undefined;
  }

  onModuleDestroy(): void {
    this.close();
  }

  private async readAndSwap(): Promise<ReloadResult> {
    let text: string;
    try {
      text = await readFile(this.options.path, 'utf8');
    } catch (e) {
      return { ok: false, errors: [readError(e)] };
    }
    const result = compilePolicyFile(text, this.options.clock);
    if (!result.ok) return { ok: false, errors: result.errors };
    const changed = result.set.version !== this.set?.version;
    // An identical file keeps the running object (and its loadedAt): nothing happened.
    if (changed) this.set = result.set;
    return { ok: true, version: result.set.version, changed };
  }

  private emit(result: ReloadResult, trigger: ReloadTrigger): void {
    for (const listener of this.listeners) {
      try {
        listener(result, trigger);
      } catch (e) {
        // One broken subscriber (say, metrics) must not hide the outcome from the others.
        this.logger.error(`reload listener failed: ${(e as Error).message}`);
      }
    }
  }
}

function readError(e: unknown): PolicyError {
  return { path: '(file)', message: `cannot read: ${(e as Error).message}` };
}
