import { type FileReloadResult, type ReloadableFile } from '@tally/config';
import { ApiError } from './api-error';
import { type ErrorCode } from './error-codes';

/**
 * A reload asked for over HTTP (`POST /v1/policies:reload`, `/v1/tokens:reload`): the outcome's body
 * (`version`, `changed` and what the store adds), or 422 `code` listing every problem of the file,
 * naming the version that stays in force.
 */
export async function reloadOverHttp<T extends { readonly version: string }, S extends object>(
  store: ReloadableFile<T, S>,
  code: ErrorCode,
  file: string,
): Promise<Omit<Extract<FileReloadResult<S>, { ok: true }>, 'ok'>> {
  const result = await store.reload('request');
  if (!result.ok) {
    throw new ApiError(
      422,
      code,
      `the ${file} is invalid; version ${store.current.version} stays in force`,
      result.errors,
    );
  }
  const { ok: _ok, ...body } = result;
  return body;
}
