import { createHash } from 'node:crypto';
import { plainToInstance } from 'class-transformer';
import { validateSync } from 'class-validator';
import { flattenValidationErrors, parseYamlFile, sortByEntry } from '@tally/config';
import { ALGORITHM_RULES, capacityOf, type AlgorithmRules } from './algorithm-rules';
import { MAX_PERIOD_MS, parseDuration } from './duration';
import { PolicyFileDto, type PolicyDto, type WindowDto } from './policy-file.dto';
import { checkPolicies } from './policy-file.checks';
import { isMapping } from './policy-file.rules';
import type {
  Algorithm,
  FailMode,
  OverflowMode,
  MatchSpec,
  Policy,
  PolicyError,
  PolicyMode,
  PolicySet,
  WindowRole,
  WindowSpec,
} from './policy.types';

export type CompileResult = { ok: true; set: PolicySet } | { ok: false; errors: PolicyError[] };

/**
 * YAML text → a validated, frozen PolicySet, or every problem found (never just the first): an
 * operator fixing a file should see all of it in one `tally policy check`.
 * `clock` stamps `loadedAt`; the version is the content hash, so one text always has one version.
 */
export function compilePolicyFile(text: string, clock: () => number = Date.now): CompileResult {
  const parsed = parseYamlFile(text, 1000);
  if (!parsed.ok) return parsed;
  if (!isMapping(parsed.value)) {
    return fail([{ path: '(root)', message: 'must be a mapping with a "policies" list' }]);
  }
  const dto = plainToInstance(PolicyFileDto, parsed.value);
  const errors = [
    ...flattenValidationErrors(
      validateSync(dto, { whitelist: true, forbidNonWhitelisted: true, stopAtFirstError: true }),
    ),
    ...checkPolicies(dto),
  ];
  if (errors.length > 0) return fail(sortByEntry(errors, 'policies'));
  const policies = (dto.policies as PolicyDto[]).map(compilePolicy);
  return {
    ok: true,
    set: Object.freeze({ version: versionOf(text), policies: Object.freeze(policies), loadedAt: clock() }),
  };
}

/** First 12 hex characters of the SHA-256 of the file text. */
export function versionOf(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex').slice(0, 12);
}

function fail(errors: PolicyError[]): CompileResult {
  return { ok: false, errors };
}

function compileMatch(raw: unknown): MatchSpec {
  const entries = Object.entries((raw ?? {}) as Record<string, string | string[]>);
  return Object.freeze(
    Object.fromEntries(
      entries.map(([name, v]) => [name, Object.freeze(typeof v === 'string' ? [v] : [...v])]),
    ),
  );
}

/** A calendar month's nominal period is 31d: the engine aligns it to months. */
function periodOf(w: WindowDto, duration: AlgorithmRules['duration']): number {
  switch (duration) {
    case 'month':
      return MAX_PERIOD_MS;
    case 'lease_ttl':
      return parseDuration(w.lease_ttl as string) as number;
    case 'period':
      return parseDuration(w.period as string) as number;
  }
}

function compileWindow(w: WindowDto): WindowSpec {
  const algorithm = w.algorithm as Algorithm;
  return Object.freeze({
    name: w.name as string,
    role: w.role as WindowRole,
    algorithm,
    limit: w.limit as number,
    periodMs: periodOf(w, ALGORITHM_RULES[algorithm].duration),
    ...(w.burst !== undefined && { burst: w.burst as number }),
  });
}

function compilePolicy(p: PolicyDto): Policy {
  const windows = (p.windows as WindowDto[]).map(compileWindow);
  const policy: Policy = {
    name: p.name as string,
    match: compileMatch(p.match),
    unless: compileMatch(p.unless),
    // Absent rather than empty: the matcher skips prefix checks for (almost) every policy.
    ...(p.match_prefix === undefined ? {} : { matchPrefix: compileMatch(p.match_prefix) }),
    ...(p.unless_prefix === undefined ? {} : { unlessPrefix: compileMatch(p.unless_prefix) }),
    key: Object.freeze([...(p.key as string[])]),
    windows: Object.freeze(windows),
    // A cost above the smallest capacity (a window's limit, or its burst) could never pass, so that
    // capacity is the natural maximum.
    maxCost: (p.max_cost as number | undefined) ?? Math.min(...windows.map(capacityOf)),
    onBackendFailure: (p.on_backend_failure as FailMode | undefined) ?? 'fail_closed',
    // Absent unless the policy falls back locally: the bound is then never silently unlimited.
    ...(p.on_backend_failure === 'local_fallback' && {
      localFallbackOverflow: (p.local_fallback_overflow as OverflowMode | undefined) ?? 'fail_closed',
    }),
    mode: (p.mode as PolicyMode | undefined) ?? 'enforce',
    enabled: (p.enabled as boolean | undefined) ?? true,
    ...(p.group === undefined ? {} : { group: p.group as string }),
  };
  return Object.freeze(policy);
}
