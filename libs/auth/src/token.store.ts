import { Logger } from '@nestjs/common';
import {
  FileLoadError,
  ReloadableFile,
  type FileReloadListener,
  type FileReloadResult,
  type FileReloadTrigger,
} from '@tally/config';
import type { FieldError } from '@tally/errors';
import { compileTokenFile } from './token-file.compiler';
import { type TokenEntry, type TokenSet } from './token-set';

/** Outcome of one reload. A failed reload leaves the running set in force. */
export type TokenReloadResult = FileReloadResult<{ readonly tokens: number }>;
/** `file`: the watcher saw the file change; `request`: `POST /v1/tokens:reload` (or a test). */
export type TokenReloadTrigger = FileReloadTrigger;
export type TokenReloadListener = FileReloadListener<TokenReloadResult>;

/** Where `BearerTokens` reads the tokens in force. */
export interface TokenSource {
  readonly current: TokenSet;
}

/** Thrown by `load` at boot: an app must not start with a tokens file it cannot read or trust. */
export class TokensLoadError extends FileLoadError {
  constructor(path: string, errors: readonly FieldError[]) {
    super('tokens file', path, errors);
  }
}

/**
 * The tokens file (`TALLY_TOKENS_FILE`) and the environment's tokens, as one set in force, reloaded
 * live like the policy file (@tally/config's `ReloadableFile`: a request is judged by the old set or
 * the new one, never a mix; an older read never wins; an invalid file keeps the running set).
 */
export class TokenStore extends ReloadableFile<TokenSet, { readonly tokens: number }> implements TokenSource {
  private readonly logger: Logger;

  constructor(
    readonly path: string,
    /** The environment's tokens, part of every set (and what file entries must not repeat). */
    env: readonly TokenEntry[],
    debounceMs = 100,
  ) {
    const logger = new Logger('Tokens');
    super({
      path,
      debounceMs,
      compile: (text) => {
        const result = compileTokenFile(text, env);
        return result.ok ? { ok: true, value: result.set } : result;
      },
      summary: (set) => ({ tokens: set.entries.length }),
      loadError: (file, errors) => new TokensLoadError(file, errors),
      subject: 'token',
      logger,
      listenerFailure: 'token reload listener failed',
    });
    this.logger = logger;
  }

  protected override announce(result: TokenReloadResult, trigger: TokenReloadTrigger): void {
    if (!result.ok) {
      const lines = result.errors.map((e) => `${e.path}: ${e.message}`).join('; ');
      this.logger.warn(`tokens file refused (${trigger}), version ${this.current.version} stays: ${lines}`);
    } else if (result.changed) {
      const names = this.current.entries.map((e) => e.grant.name).join(', ');
      this.logger.log(`tokens reloaded (${trigger}): version ${result.version}, tokens ${names}`);
    }
  }
}
