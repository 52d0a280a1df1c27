import { ApiError } from '@tally/http';

/** How long the console waits for another Tally service: a page must not hang on a dead one. */
const TIMEOUT_MS = 3000;

/**
 * GET on another Tally service for the console: the decision API or the relay, at the base URL the
 * operator configured. A missing URL or a failed connection is the console's condition, answered with
 * its own code, never a 500.
 */
export async function upstreamGet(
  base: string | undefined,
  setting: string,
  path: string,
  authorization?: string,
): Promise<{ status: number; text: string; json: () => unknown }> {
  if (base === undefined) throw new ApiError(503, 'upstream.not_configured', `${setting} is not set`);
  let response: Response;
  try {
    response = await fetch(new URL(path, base), {
      headers: authorization === undefined ? {} : { authorization },
      signal: AbortSignal.timeout(TIMEOUT_MS),
    });
  } catch (error) {
    throw new ApiError(502, 'upstream.unreachable', `${setting}: ${(error as Error).message}`);
  }
  const text = await response.text();
  return { status: response.status, text, json: () => JSON.parse(text) as unknown };
}
