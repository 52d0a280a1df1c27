import { parseDuration } from '@tally/policy';

const ISO = /^(\d{4})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,3}))?)?(Z|[+-]\d{2}:\d{2}))?$/;

/**
 * A time on the command line → epoch ms, or undefined. Accepted: an ISO 8601 instant with its zone
 * (`2026-11-30T09:00:00Z`, `2026-11-30T10:00+01:00`), a bare date (UTC midnight), `now`, and
 * `now-<duration>` (`now-1h`, `now-30m`, `now-7d`). A time without a zone is refused: whose 09:00?
 */
export function parseTimeArg(text: string, nowMs: number): number | undefined {
  if (text === 'now') return nowMs;
  if (text.startsWith('now-')) {
    const ms = parseDuration(text.slice(4));
    return ms === undefined ? undefined : nowMs - ms;
  }
  const m = ISO.exec(text);
  if (m === null) return undefined;
  const [, y, mo, d, h = '00', mi = '00', s = '00', frac = '0', zone = 'Z'] = m;
  const local = Date.UTC(Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Number(s));
  const check = new Date(local);
  // Date.UTC rolls 2026-02-30 over into March; a round trip catches it.
  if (
    check.getUTCFullYear() !== Number(y) ||
    check.getUTCMonth() !== Number(mo) - 1 ||
    check.getUTCDate() !== Number(d) ||
    check.getUTCHours() !== Number(h) ||
    check.getUTCMinutes() !== Number(mi) ||
    check.getUTCSeconds() !== Number(s)
  ) {
    return undefined;
  }
  const offsetMin =
    zone === 'Z'
      ? 0
      : (zone[0] === '-' ? -1 : 1) * (Number(zone.slice(1, 3)) * 60 + Number(zone.slice(4, 6)));
  return local + Number(frac.padEnd(3, '0')) - offsetMin * 60_000;
}
