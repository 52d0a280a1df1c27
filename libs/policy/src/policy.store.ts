import { Inject, Injectable, Logger, type OnModuleDestroy } from '@nestjs/common';
import {
  FileLoadError,
  ReloadableFile,
  type FileReloadListener,
  type FileReloadResult,
  type FileReloadTrigger,
} from '@tally/config';
import { compilePolicyFile } from './policy.compiler';
import { POLICY_MODULE_OPTIONS } from './policy.constants';
import type { PolicyModuleOptions } from './policy.options';
import type { PolicyError, PolicySet } from './policy.types';

/** Outcome of one reload. A failed reload leaves the running set in force. */
export type ReloadResult = FileReloadResult;
/** `file`: the watcher saw the file change; `request`: someone called `reload()` (API, CLI, test). */
export type ReloadTrigger = FileReloadTrigger;
export type ReloadListener = FileReloadListener<ReloadResult>;

/** Thrown by `load` at boot: the app must not start without a valid policy set. */
export class PolicyLoadError extends FileLoadError {
  constructor(path: string, errors: readonly PolicyError[]) {
    super('policy file', path, errors);
  }
}

/**
 * Holds the policy set in force: the policy file, read at boot and reloaded live (@tally/config's
 * `ReloadableFile`: a decision sees either the old set or the new one, never a mix; an older read
 * never wins; an invalid file keeps the running set).
 */
@Injectable()
export class PolicyStore extends ReloadableFile<PolicySet> implements OnModuleDestroy {
  constructor(@Inject(POLICY_MODULE_OPTIONS) options: PolicyModuleOptions) {
    super({
      path: options.path,
      debounceMs: options.debounceMs ?? 100,
      compile: (text) => {
        const result = compilePolicyFile(text, options.clock);
        return result.ok ? { ok: true, value: result.set } : result;
      },
      loadError: (path, errors) => new PolicyLoadError(path, errors),
      subject: 'policy',
      logger: new Logger(PolicyStore.name),
      listenerFailure: 'reload listener failed',
    });
  }

  onModuleDestroy(): void {
    this.close();
  }
}
