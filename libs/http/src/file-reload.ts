import { type FileReloadResult, type ReloadableFile } from '@tally/config';
import { ApiError } from './api-error';
import { reloadEverywhere } from './cluster.worker';
import { type ErrorCode } from './error-codes';

/**
 * A reload asked for over HTTP (`POST /v1/policies:reload`, `/v1/tokens:reload`): the outcome's body
 * (`version`, `changed` and what the store adds), or 422 `code` listing every problem of the file,
 * naming the version that stays in force. With several workers the reload runs in every one of them
 * (see `shareReload`), and the answer is OK only once all of them run the same new version; a worker
 * that did not confirm in time, or two that read different versions (the file changed in between),
 * give 503 `reload.incomplete`: retry.
 */
export async function reloadOverHttp<T extends { readonly version: string }, S extends object>(
  store: ReloadableFile<T, S>,
  code: ErrorCode,
  file: string,
): Promise<Omit<Extract<FileReloadResult<S>, { ok: true }>, 'ok'>> {
  const outcomes = await reloadEverywhere(file, store);
  const invalid = outcomes.find((o) => o.result?.ok === false)?.result;
  if (invalid !== undefined && !invalid.ok) {
    throw new ApiError(
      422,
      code,
      `the ${file} is invalid; version ${store.current.version} stays in force`,
      invalid.errors,
    );
  }
  const mine = outcomes.find((o) => o.pid === process.pid)?.result as FileReloadResult<S> | undefined;
  const versions = new Set(outcomes.map((o) => (o.result?.ok === true ? o.result.version : undefined)));
  if (mine === undefined || !mine.ok || versions.size !== 1) {
    throw new ApiError(
      503,
      'reload.incomplete',
      `the ${file} was not confirmed by every worker (${outcomes.length} answered); retry`,
    );
  }
  const { ok: _ok, ...body } = mine;
  return body;
}
