import { isRFC3339 } from 'class-validator';
import { ULID_PATTERN } from './cloud-event.v1';
import { DENY_REASONS } from './deny-reasons';
import { CLOUDEVENTS_SPECVERSION, DECISION_OUTCOMES, EVENT_DATA_CONTENT_TYPE } from './event-types';

/**
 * Hand-written mirror of the class-validator rules on the event classes, for the consume hot path:
 * class-transformer + class-validator manage ≈ 20k events/s on one core, far below the projector's
 * 50k/s target. The parsers run this first and fall back to class-validator only to explain a
 * rejection, so the decorated classes stay the contract and the source of the reasons. The parser
 * specs hold both to the same verdicts. Returns the first problem, or null when the event is valid.
 */
export function usageEventProblem(event: Record<string, unknown>): string | null {
  return envelopeProblem(event) ?? dataProblem(event.data, 'usage');
}

export function decisionEventProblem(event: Record<string, unknown>): string | null {
  return envelopeProblem(event) ?? dataProblem(event.data, 'decision');
}

const USAGE_OUTCOMES: readonly unknown[] = ['allowed', 'degraded'];
const OUTCOMES: readonly unknown[] = DECISION_OUTCOMES;
const REASONS: readonly unknown[] = DENY_REASONS;
const MODES: readonly unknown[] = ['enforce', 'shadow'];
const ROLES: readonly unknown[] = ['burst', 'sustained'];

function envelopeProblem(e: Record<string, unknown>): string | null {
  if (e.specversion !== CLOUDEVENTS_SPECVERSION) return 'specversion';
  if (typeof e.id !== 'string' || !ULID_PATTERN.test(e.id)) return 'id';
  if (!isText(e.source)) return 'source';
  if (typeof e.time !== 'string' || !isRFC3339(e.time)) return 'time';
  if (!isAbsent(e.subject) && !isText(e.subject)) return 'subject';
  if (e.datacontenttype !== EVENT_DATA_CONTENT_TYPE) return 'datacontenttype';
  return null;
}

function dataProblem(d: unknown, kind: 'usage' | 'decision'): string | null {
  if (!isObject(d)) return 'data';
  if (!isText(d.policy_set_version)) return 'data.policy_set_version';
  if (!isAbsent(d.tenant) && !isText(d.tenant)) return 'data.tenant';
  if (!isStringRecord(d.selectors)) return 'data.selectors';
  if (!isStringRecord(d.attributes)) return 'data.attributes';
  if (!isSafeIntAtLeast(d.cost, kind === 'usage' ? 1 : 0)) return 'data.cost';
  if (!(kind === 'usage' ? USAGE_OUTCOMES : OUTCOMES).includes(d.outcome)) return 'data.outcome';
  if (!isAbsent(d.degraded_cause) && typeof d.degraded_cause !== 'string') return 'data.degraded_cause';
  if (!isAbsent(d.idempotency_key) && typeof d.idempotency_key !== 'string') return 'data.idempotency_key';
  if (kind === 'decision') {
    // Mirrors @ValidateIf: a reason is checked when denied or when present at all (null included).
    if ((d.outcome === 'denied' || d.reason !== undefined) && !REASONS.includes(d.reason))
      return 'data.reason';
    if (!isSafeIntAtLeast(d.count, 1)) return 'data.count';
  }
  if (!Array.isArray(d.policies)) return 'data.policies';
  for (let i = 0; i < d.policies.length; i++) {
    const problem = policyProblem(d.policies[i]);
    if (problem !== null) return `data.policies[${i}]${problem}`;
  }
  return null;
}

function policyProblem(p: unknown): string | null {
  if (!isObject(p)) return '';
  if (!isText(p.name)) return '.name';
  if (!MODES.includes(p.mode)) return '.mode';
  if (typeof p.key !== 'string') return '.key';
  if (!Array.isArray(p.windows)) return '.windows';
  for (let i = 0; i < p.windows.length; i++) {
    const problem = windowProblem(p.windows[i]);
    if (problem !== null) return `.windows[${i}]${problem}`;
  }
  return null;
}

function windowProblem(w: unknown): string | null {
  if (!isObject(w)) return '';
  if (!isText(w.name)) return '.name';
  if (!ROLES.includes(w.role)) return '.role';
  if (!isIntAtLeast(w.limit, 1)) return '.limit';
  if (!isAbsent(w.remaining) && !isFiniteNumber(w.remaining)) return '.remaining';
  if (!isAbsent(w.reset_ms) && !(isFiniteNumber(w.reset_ms) && w.reset_ms >= 0)) return '.reset_ms';
  if (!isAbsent(w.would_deny) && typeof w.would_deny !== 'boolean') return '.would_deny';
  return null;
}

/** class-validator's @IsOptional skips null as well as undefined. */
function isAbsent(value: unknown): value is null | undefined {
  return value === undefined || value === null;
}

function isText(value: unknown): value is string {
  return typeof value === 'string' && value !== '';
}

function isFiniteNumber(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value);
}

/** An integer ≥ min and ≤ 2^53 − 1 (@IsInt @Min @Max(Number.MAX_SAFE_INTEGER)): exact as a number. */
function isSafeIntAtLeast(value: unknown, min: number): boolean {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= min;
}

function isIntAtLeast(value: unknown, min: number): boolean {
  return typeof value === 'number' && Number.isInteger(value) && value >= min;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isStringRecord(value: unknown): boolean {
  if (!isObject(value)) return false;
  for (const key in value) if (typeof value[key] !== 'string') return false;
  return true;
}
