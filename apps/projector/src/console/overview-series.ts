import type { SampledSeries } from '@tally/observability';

/**
 * Which of the decision API's series each Overview chart sums, and under which label. Decisions are
 * read from `tally_decisions_total` (each decision once, as answered), so the denials chart counts the
 * 429s; what each policy said is read from `tally_policy_decisions_total`.
 */

/** The decision API's counters the console samples. */
export const DECISIONS = 'tally_decisions_total';
export const POLICY_DECISIONS = 'tally_policy_decisions_total';

/** `reason` of an allowed decision no policy applied to (apps/decision-api decision-outcomes.ts). */
const UNMATCHED = 'unmatched';

type Group = (s: SampledSeries) => string | null;

/** Decisions/s by outcome. */
export const byOutcome: Group = (s) => (s.name === DECISIONS ? s.labels.outcome : null);

/** Policies/s by what each said (`denied · p`, `would_deny · shadow-p`), and the unmatched decisions. */
export const byPolicy: Group = (s) => {
  if (s.name === POLICY_DECISIONS) return `${s.labels.outcome} · ${s.labels.policy}`;
  if (s.name === DECISIONS && s.labels.reason === UNMATCHED) return `${s.labels.outcome} · (${UNMATCHED})`;
  return null;
};

/** Denials/s by deny reason (enforced denials: a shadow policy's would-deny is in `byPolicy`). */
export const deniedByReason: Group = (s) =>
  s.name === DECISIONS && s.labels.outcome === 'denied' ? s.labels.reason : null;

/** Degraded decisions/s by backend failure. */
export const degradedByCause: Group = (s) =>
  s.name === DECISIONS && s.labels.outcome === 'degraded' ? s.labels.reason : null;
