import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { Logger } from '@nestjs/common';
import { watchFile, type FileWatch } from '@tally/policy';
import { type FieldError } from './api-error';
import { compileTokenFile } from './token-file.compiler';
import { type TokenEntry, type TokenSet } from './token-set';

/** Outcome of one reload. A failed reload leaves the running set in force. */
export type TokenReloadResult =
  | { readonly ok: true; readonly version: string; readonly changed: boolean; readonly tokens: number }
  | { readonly ok: false; readonly errors: readonly FieldError[] };
/** `file`: the watcher saw the file change; `request`: `POST /v1/tokens:reload` (or a test). */
export type TokenReloadTrigger = 'file' | 'request';
export type TokenReloadListener = (result: TokenReloadResult, trigger: TokenReloadTrigger) => void;

/** Where `BearerTokens` reads the tokens in force. */
export interface TokenSource {
  readonly current: TokenSet;
}

/** Thrown by `load` at boot: an app must not start with a tokens file it cannot read or trust. */
export class TokensLoadError extends Error {
  constructor(
    readonly path: string,
    readonly errors: readonly FieldError[],
  ) {
    super(`invalid tokens file ${path}:\n${errors.map((e) => `  ${e.path}: ${e.message}`).join('\n')}`);
    this.name = TokensLoadError.name;
  }
}

/**
 * The tokens file (`TALLY_TOKENS_FILE`) and the environment's tokens, as one set in force, reloaded
 * live like the policy file: on file change (debounced, safe with editors that rename over the file)
 * and on request. Swapping is one reference assignment, so a request is judged by the old set or the
 * new one, never a mix; reloads are serialized so an older read never wins.
 */
export class TokenStore implements TokenSource {
  private readonly logger = new Logger('Tokens');
  private readonly listeners = new Set<TokenReloadListener>();
  private set: TokenSet | undefined;
  private reloading: Promise<unknown> = Promise.resolve();
  private watching: FileWatch | undefined;

  constructor(
    readonly path: string,
    /** The environment's tokens, part of every set (and what file entries must not repeat). */
    private readonly env: readonly TokenEntry[],
    private readonly debounceMs = 100,
  ) {}

  get current(): TokenSet {
    if (!this.set) throw new Error('TokenStore: no token set loaded yet');
    return this.set;
  }

  /** Boot: read and compile the file synchronously; throws `TokensLoadError` listing every error. */
  load(): TokenSet {
    let text: string;
    try {
      text = readFileSync(this.path, 'utf8');
    } catch (e) {
      throw new TokensLoadError(this.path, [readError(e)]);
    }
    const result = compileTokenFile(text, this.env);
    if (!result.ok) throw new TokensLoadError(this.path, result.errors);
    this.set = result.set;
    return result.set;
  }

  /** Re-read the file; an invalid or unreadable file keeps the running set. Listeners hear every outcome. */
  reload(trigger: TokenReloadTrigger = 'request'): Promise<TokenReloadResult> {
    const next = this.reloading.then(() => this.readAndSwap());
    this.reloading = next.catch(() => undefined);
    return next.then((result) => {
      this.report(result, trigger);
      return result;
    });
  }

  onReload(listener: TokenReloadListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Reload on file changes until `close()`. Idempotent. */
  watch(): void {
    if (this.watching) return;
    this.watching = watchFile(
      this.path,
      this.debounceMs,
      () => void this.reload('file'),
      (e) => this.logger.warn(`watching ${this.path} failed; reload with the API: ${e.message}`),
    );
  }

  close(): void {
    this.watching?.close();
    this.watching = undefined;
  }

  private async readAndSwap(): Promise<TokenReloadResult> {
    let text: string;
    try {
      text = await readFile(this.path, 'utf8');
    } catch (e) {
      return { ok: false, errors: [readError(e)] };
    }
    const result = compileTokenFile(text, this.env);
    if (!result.ok) return { ok: false, errors: result.errors };
    const changed = result.set.version !== this.set?.version;
    if (changed) this.set = result.set;
    return { ok: true, version: result.set.version, changed, tokens: result.set.entries.length };
  }

  private report(result: TokenReloadResult, trigger: TokenReloadTrigger): void {
    if (!result.ok) {
      const lines = result.errors.map((e) => `${e.path}: ${e.message}`).join('; ');
      this.logger.warn(`tokens file refused (${trigger}), version ${this.current.version} stays: ${lines}`);
    } else if (result.changed) {
      const names = this.current.entries.map((e) => e.grant.name).join(', ');
      this.logger.log(`tokens reloaded (${trigger}): version ${result.version}, tokens ${names}`);
    }
    for (const listener of this.listeners) {
      try {
        listener(result, trigger);
      } catch (e) {
        // One broken subscriber (say, metrics) must not hide the outcome from the others.
        this.logger.error(`token reload listener failed: ${(e as Error).message}`);
      }
    }
  }
}

function readError(e: unknown): FieldError {
  return { path: '(file)', message: `cannot read: ${(e as Error).message}` };
}
