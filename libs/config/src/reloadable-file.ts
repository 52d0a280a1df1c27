import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { type Logger } from '@nestjs/common';
import { type FileProblem } from './config-file';
import { watchFile, type FileWatch } from './file.watcher';

/** A file's text compiled into the value it stands for (a set with a content version), or every problem. */
export type FileCompiler<T> = (
  text: string,
) =>
  { readonly ok: true; readonly value: T } | { readonly ok: false; readonly errors: readonly FileProblem[] };

/** Outcome of one reload; `S` is what a store adds to a success (the tokens count). */
export type FileReloadResult<S extends object = object> =
  | ({ readonly ok: true; readonly version: string; readonly changed: boolean } & S)
  | { readonly ok: false; readonly errors: readonly FileProblem[] };
/** `file`: the watcher saw the file change; `request`: someone called `reload()` (API, CLI, test). */
export type FileReloadTrigger = 'file' | 'request';
export type FileReloadListener<R> = (result: R, trigger: FileReloadTrigger) => void;

/** Thrown by `load` at boot, listing every problem: an app must not start with a file it cannot read or trust. */
export class FileLoadError extends Error {
  constructor(
    /** `policy file`, `tokens file`. */
    file: string,
    readonly path: string,
    readonly errors: readonly FileProblem[],
  ) {
    super(`invalid ${file} ${path}:\n${errors.map((e) => `  ${e.path}: ${e.message}`).join('\n')}`);
    this.name = new.target.name;
  }
}

export interface ReloadableFileOptions<T, S extends object> {
  readonly path: string;
  readonly debounceMs: number;
  readonly compile: FileCompiler<T>;
  /** What a success adds to its outcome, from the value read (none: nothing). */
  readonly summary?: (value: T) => S;
  /** The error `load` throws (a `FileLoadError` of the store's own class). */
  readonly loadError: (path: string, errors: readonly FileProblem[]) => FileLoadError;
  /** `policy`, `token`: names the value in the error thrown before `load`. */
  readonly subject: string;
  readonly logger: Logger;
  /** Log line opening when a listener throws (`reload listener failed`). */
  readonly listenerFailure: string;
}

/**
 * A configuration file held in force and reloaded live (the policy file, the tokens file): read and
 * compiled at boot, then on file change (debounced, safe with editors that rename over the file) and
 * on request. Swapping is one reference assignment, so a reader sees the old value or the new one,
 * never a mix; reloads are serialized so an older read never wins; an invalid or unreadable file
 * keeps the running value, and an identical one keeps the running object.
 */
export class ReloadableFile<T extends { readonly version: string }, S extends object = object> {
  private readonly listeners = new Set<FileReloadListener<FileReloadResult<S>>>();
  private value: T | undefined;
  private reloading: Promise<unknown> = Promise.resolve();
  private watching: FileWatch | undefined;

  constructor(private readonly file: ReloadableFileOptions<T, S>) {}

  /** The value in force. Throws before `load`: reading it before boot finished is a wiring bug. */
  get current(): T {
    if (!this.value) throw new Error(`${this.constructor.name}: no ${this.file.subject} set loaded yet`);
    return this.value;
  }

  /** Boot: read and compile the file synchronously; throws the `loadError`, listing every problem. */
  load(): T {
    let text: string;
    try {
      text = readFileSync(this.file.path, 'utf8');
    } catch (e) {
      throw this.file.loadError(this.file.path, [readError(e)]);
    }
    const result = this.file.compile(text);
    if (!result.ok) throw this.file.loadError(this.file.path, result.errors);
    this.value = result.value;
    return result.value;
  }

  /** Re-read the file; an invalid or unreadable file keeps the running value. Listeners hear every outcome. */
  reload(trigger: FileReloadTrigger = 'request'): Promise<FileReloadResult<S>> {
    const next = this.reloading.then(() => this.readAndSwap());
    this.reloading = next.catch(() => undefined);
    return next.then((result) => {
      this.announce(result, trigger);
      this.emit(result, trigger);
      return result;
    });
  }

  /** Subscribe to reload outcomes (metrics, logs, audit). Returns the unsubscribe function. */
  onReload(listener: FileReloadListener<FileReloadResult<S>>): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Reload on file changes until `close()`. Idempotent. */
  watch(): void {
    if (this.watching) return;
    this.watching = watchFile(
      this.file.path,
      this.file.debounceMs,
      () => void this.reload('file'),
      (e) => this.file.logger.warn(`watching ${this.file.path} failed; reload with the API: ${e.message}`),
    );
  }

  close(): void {
    this.watching?.close();
    this.watching = undefined;
  }

  /** Before the listeners hear an outcome: a store's own log line, if it writes one. */
  protected announce(_result: FileReloadResult<S>, _trigger: FileReloadTrigger): void {}

  private async readAndSwap(): Promise<FileReloadResult<S>> {
    let text: string;
    try {
      text = await readFile(this.file.path, 'utf8');
    } catch (e) {
      return { ok: false, errors: [readError(e)] };
    }
    const result = this.file.compile(text);
    if (!result.ok) return { ok: false, errors: result.errors };
    const changed = result.value.version !== this.value?.version;
    // An identical file keeps the running object (and its loadedAt): nothing happened.
    if (changed) this.value = result.value;
    const extra = this.file.summary?.(result.value) ?? ({} as S);
    return { ok: true, version: result.value.version, changed, ...extra };
  }

  private emit(result: FileReloadResult<S>, trigger: FileReloadTrigger): void {
    for (const listener of this.listeners) {
      try {
        listener(result, trigger);
      } catch (e) {
        // One broken subscriber (say, metrics) must not hide the outcome from the others.
        this.file.logger.error(`${this.file.listenerFailure}: ${(e as Error).message}`);
      }
    }
  }
}

function readError(e: unknown): FileProblem {
  return { path: '(file)', message: `cannot read: ${(e as Error).message}` };
}
