import { type FileReloadResult, type ReloadableFile } from '@tally/config';
import { ApiError, type ErrorCode } from '@tally/errors';
import { reloadEverywhere, type WorkerReload } from '@tally/cluster';

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
  const outcome = combineReloads(await reloadEverywhere(file, store), process.pid);
  if (outcome.kind === 'invalid') {
    throw new ApiError(
      422,
      code,
      `the ${file} is invalid; version ${store.current.version} stays in force`,
      outcome.errors,
    );
  }
  if (outcome.kind === 'incomplete') {
    throw new ApiError(
      503,
      'reload.incomplete',
      `the ${file} was not confirmed by every worker (${outcome.why}); retry`,
    );
  }
  const { ok: _ok, ...body } = outcome.mine as Extract<FileReloadResult<S>, { ok: true }>;
  return body;
}

type Combined =
  | { readonly kind: 'ok'; readonly mine: Extract<FileReloadResult, { ok: true }> }
  | { readonly kind: 'invalid'; readonly errors: Extract<FileReloadResult, { ok: false }>['errors'] }
  | { readonly kind: 'incomplete'; readonly why: string };

/**
 * The workers' outcomes as one answer: any invalid → invalid (they read one file); any missing, or
 * versions that differ → incomplete; else this worker's own result (`pid`).
 */
export function combineReloads(outcomes: readonly WorkerReload[], pid: number): Combined {
  for (const o of outcomes) if (o.result?.ok === false) return { kind: 'invalid', errors: o.result.errors };
  const missing = outcomes.filter((o) => o.result === undefined).map((o) => o.pid);
  if (missing.length > 0) return { kind: 'incomplete', why: `no answer from worker ${missing.join(', ')}` };
  const versions = new Set(outcomes.map((o) => (o.result?.ok === true ? o.result.version : '')));
  if (versions.size > 1)
    return { kind: 'incomplete', why: `workers run versions ${[...versions].join(', ')}` };
  const mine = outcomes.find((o) => o.pid === pid)?.result;
  if (mine?.ok !== true) return { kind: 'incomplete', why: 'this worker took no part' };
  return { kind: 'ok', mine };
}
