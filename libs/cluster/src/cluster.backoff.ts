/** A worker that dies is forked again after this long, doubled for each death in a row, up to the cap. */
export const RESTART_BASE_MS = 250;
export const RESTART_CAP_MS = 10_000;
/** A worker that lived this long resets the backoff: it was a crash, not a crash loop. */
export const STABLE_MS = 30_000;

/**
 * When to fork again after a worker died having lived `livedMs`, with `deathsInARow` earlier quick
 * deaths: a worker that crashes at boot (bad Redis address, a bug) costs one fork per 10 s at worst,
 * never a tight loop; one that crashes after a long life is back in 250 ms.
 */
export function nextRestart(
  livedMs: number,
  deathsInARow: number,
): { deathsInARow: number; delayMs: number } {
  const deaths = livedMs >= STABLE_MS ? 1 : deathsInARow + 1;
  return { deathsInARow: deaths, delayMs: Math.min(RESTART_CAP_MS, RESTART_BASE_MS * 2 ** (deaths - 1)) };
}
