import type { TallyExtension, TallyRelease } from './client.types';
import { TallyRequestError } from './tally-request.error';

const OUTCOMES = new Set(['released', 'already_released', 'expired']);

/**
 * Maps one answer of `POST /v1/leases/{id}:release`: 200 with a release body is the answer; a 4xx
 * is the caller's mistake (`TallyRequestError`: `lease.invalid_id`, `lease.not_found`, `auth.*`);
 * a 5xx or anything else means Tally gave no usable answer.
 */
export function interpretRelease(status: number, body: unknown): TallyRelease {
  const record = typeof body === 'object' && body !== null ? (body as Record<string, unknown>) : {};
  if (status === 200 && typeof record.outcome === 'string' && OUTCOMES.has(record.outcome)) {
    return { ok: true, ...(record as Omit<Extract<TallyRelease, { ok: true }>, 'ok'>) };
  }
  const code = typeof record.code === 'string' ? record.code : `http.${status}`;
  const message = typeof record.message === 'string' ? record.message : `HTTP ${status}`;
  if (status >= 400 && status < 500) throw new TallyRequestError(status, code, message);
  const kind = status >= 500 ? 'server_error' : 'invalid_response';
  return { ok: false, failure: { kind, message: `HTTP ${status} ${code}` } };
}

/**
 * Maps one answer of `POST /v1/leases/{id}:extend`: 200 with an expiry is the answer; a 4xx is a
 * `TallyRequestError` (`lease.expired` / `lease.released` 409: the units are no longer held, stop or
 * take a new lease; `lease.not_found` 404; `lease.ttl_too_long` 400; `auth.*`); a 5xx or anything
 * else means Tally gave no usable answer.
 */
export function interpretExtension(status: number, body: unknown): TallyExtension {
  const record = typeof body === 'object' && body !== null ? (body as Record<string, unknown>) : {};
  if (status === 200 && typeof record.expires_at === 'string' && typeof record.ttl_ms === 'number') {
    return { ok: true, ...(record as Omit<Extract<TallyExtension, { ok: true }>, 'ok'>) };
  }
  const code = typeof record.code === 'string' ? record.code : `http.${status}`;
  const message = typeof record.message === 'string' ? record.message : `HTTP ${status}`;
  if (status >= 400 && status < 500) throw new TallyRequestError(status, code, message);
  const kind = status >= 500 ? 'server_error' : 'invalid_response';
  return { ok: false, failure: { kind, message: `HTTP ${status} ${code}` } };
}
