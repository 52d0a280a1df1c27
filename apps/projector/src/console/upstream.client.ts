import { ApiError } from '@tally/errors';

/** How long the console waits for another Tally service: a page must not hang on a dead one. */
const TIMEOUT_MS = 3000;

export interface UpstreamAnswer {
  readonly status: number;
  readonly text: string;
  readonly json: () => unknown;
}

/**
 * GET on another Tally service for the console: the decision API or the relay, at the base URL the
 * operator configured. A missing URL or a failed connection is the console's condition, answered with
 * its own code, never a 500.
 */
export function upstreamGet(
  base: string | undefined,
  setting: string,
  path: string,
  authorization?: string,
): Promise<UpstreamAnswer> {
  return upstreamCall(base, setting, path, { authorization });
}

/** Any method, with an optional JSON body (the console's override changes). */
export async function upstreamCall(
  base: string | undefined,
  setting: string,
  path: string,
  init: { method?: 'GET' | 'PUT' | 'DELETE'; authorization?: string; body?: unknown },
): Promise<UpstreamAnswer> {
  if (base === undefined) throw new ApiError(503, 'upstream.not_configured', `${setting} is not set`);
  const headers: Record<string, string> = {};
  if (init.authorization !== undefined) headers.authorization = init.authorization;
  if (init.body !== undefined) headers['content-type'] = 'application/json';
  let response: Response;
  try {
    response = await fetch(new URL(path, base), {
      method: init.method ?? 'GET',
      headers,
      ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
      signal: AbortSignal.timeout(TIMEOUT_MS),
    });
  } catch (error) {
    throw new ApiError(502, 'upstream.unreachable', `${setting}: ${(error as Error).message}`);
  }
  const text = await response.text();
  return { status: response.status, text, json: () => JSON.parse(text) as unknown };
}
