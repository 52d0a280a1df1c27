import { readFile } from 'node:fs/promises';
import { parse } from 'yaml';
import { OpsError } from './ops.error';

/** One proposed runtime override for `tally simulate`: the shape `tally overrides list --json` prints. */
export interface ProposedOverride {
  readonly policy: string;
  /** The policy's key value as the engine builds it (`-` or '' for a policy without key dims). */
  readonly key: string;
  /** The tenant whose counters it changes; null or absent: requests without a tenant. */
  readonly tenant?: string | null;
  /** Window name → limit (0 blocks the key). */
  readonly limits: Readonly<Record<string, number>>;
}

/**
 * Reads a file of proposed overrides — `{items: [...]}` (the output of `tally overrides list
 * --json`, so the overrides in force can be simulated as they are), or a list — JSON or YAML. Every
 * problem is listed with its index; a bad file is a usage error (exit 2).
 */
export async function loadProposedOverrides(file: string): Promise<ProposedOverride[]> {
  let value: unknown;
  try {
    value = parse(await readFile(file, 'utf8'));
  } catch (error) {
    throw new OpsError(`${file}: ${(error as Error).message}`, true);
  }
  const items: unknown = Array.isArray(value) ? value : (value as { items?: unknown } | null)?.items;
  if (!Array.isArray(items))
    throw new OpsError(`${file}: must be a list of overrides, or {items: [...]}`, true);
  const problems: string[] = [];
  const overrides = items.flatMap((item: unknown, i): ProposedOverride[] => {
    const o = item as Partial<Record<keyof ProposedOverride, unknown>> | null;
    const limits = o?.limits;
    const limitsOk =
      typeof limits === 'object' &&
      limits !== null &&
      Object.values(limits).every((l) => Number.isSafeInteger(l) && (l as number) >= 0);
    if (typeof o?.policy !== 'string' || typeof o.key !== 'string' || !limitsOk) {
      problems.push(`[${i}]: needs policy, key and limits ({window: integer ≥ 0})`);
      return [];
    }
    const tenant = typeof o.tenant === 'string' ? o.tenant : null;
    return [
      { policy: o.policy, key: o.key === '-' ? '' : o.key, tenant, limits: limits as Record<string, number> },
    ];
  });
  if (problems.length > 0) throw new OpsError(`${file}:\n  ${problems.join('\n  ')}`, true);
  return overrides;
}

/** The lookup key of an override in the simulator: policy, tenant and key. */
export function overrideId(policy: string, tenant: string | null | undefined, key: string): string {
  return `${policy}\u0000${tenant ?? ''}\u0000${key}`;
}
