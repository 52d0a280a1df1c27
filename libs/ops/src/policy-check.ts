import { readFile } from 'node:fs/promises';
import { compilePolicyFile, formatDuration, type PolicyError, type PolicySet } from '@tally/policy';
import { OpsError } from './ops.error';

/** One policy of a valid file, as `tally policy check` lists it. */
export interface CheckedPolicy {
  readonly name: string;
  readonly mode: 'enforce' | 'shadow';
  readonly enabled: boolean;
  readonly key: readonly string[];
  /** `name algorithm limit/period`, e.g. `sustained fixed_window 6000/1m`. */
  readonly windows: readonly string[];
  readonly group?: string;
}

export type PolicyCheckResult =
  | { readonly ok: true; readonly file: string; readonly version: string; readonly policies: CheckedPolicy[] }
  | { readonly ok: false; readonly file: string; readonly errors: PolicyError[] };

/**
 * Validates a policy file exactly as the decision API does at boot and on reload, so a file that
 * passes here is accepted there. An unreadable file is one error at path `(file)`.
 */
export async function checkPolicyFile(file: string): Promise<PolicyCheckResult> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    return { ok: false, file, errors: [{ path: '(file)', message: (error as Error).message }] };
  }
  const compiled = compilePolicyFile(text);
  if (!compiled.ok) return { ok: false, file, errors: compiled.errors };
  return {
    ok: true,
    file,
    version: compiled.set.version,
    policies: compiled.set.policies.map((p) => ({
      name: p.name,
      mode: p.mode,
      enabled: p.enabled,
      key: p.key,
      windows: p.windows.map(
        (w) =>
          `${w.name} ${w.algorithm} ${w.limit}/${w.algorithm === 'calendar_month' ? '1mo' : formatDuration(w.periodMs)}` +
          (w.burst === undefined ? '' : ` burst ${w.burst}`),
      ),
      ...(p.group === undefined ? {} : { group: p.group }),
    })),
  };
}

/**
 * The policy set of a file, for commands that evaluate with it (simulate, reseed).
 * @throws OpsError (usage) listing every problem of the file.
 */
export async function loadPolicySet(file: string): Promise<PolicySet> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    throw new OpsError(`cannot read policy file ${file}: ${(error as Error).message}`, true);
  }
  const compiled = compilePolicyFile(text);
  if (compiled.ok) return compiled.set;
  const lines = compiled.errors.map((e) => `  ${e.path}: ${e.message}`);
  throw new OpsError(`invalid policy file ${file}:\n${lines.join('\n')}`, true);
}
