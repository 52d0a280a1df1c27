import { valueProblem } from '@tally/policy';
import type { FieldError } from '@tally/errors';
import { TOKEN_NAME } from './token-file.dto';
import { type TokenEntry } from './token-set';

const TENANT_RULE = 'must be a tenant: 1..256 bytes (UTF-8) without surrounding spaces or control characters';

const isMapping = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * What per-field decorators cannot say: each tenant of a list, uniqueness across entries, and a
 * digest that is also a token of the environment (one token with two sets of roles would be
 * ambiguous; an admin token that is also a caller token is what boot refuses). Runs on whatever parts
 * of the file are well typed, so one pass reports everything.
 */
export function checkTokenEntries(tokens: unknown, env: readonly TokenEntry[]): FieldError[] {
  if (!Array.isArray(tokens)) return [];
  const errors: FieldError[] = [];
  const firstName = new Map<string, number>();
  const firstDigest = new Map<string, number>();
  const envDigests = new Map(env.map((e) => [e.digest.toString('hex'), e.grant.name]));
  (tokens as unknown[]).forEach((t, i) => {
    if (!isMapping(t)) return;
    const path = `tokens[${i}]`;
    // Only a valid name is compared (and shown): an invalid one already has its own error.
    if (typeof t.name === 'string' && TOKEN_NAME.test(t.name)) {
      const first = firstName.get(t.name);
      if (first === undefined) firstName.set(t.name, i);
      else
        errors.push({
          path: `${path}.name`,
          message: `duplicate token name "${t.name}" (first at tokens[${first}])`,
        });
    }
    if (typeof t.sha256 === 'string') {
      const first = firstDigest.get(t.sha256);
      const inEnv = envDigests.get(t.sha256);
      if (first !== undefined)
        errors.push({ path: `${path}.sha256`, message: `same token as tokens[${first}]: list a token once` });
      else firstDigest.set(t.sha256, i);
      if (inEnv !== undefined)
        errors.push({
          path: `${path}.sha256`,
          message: `same token as ${inEnv}: list a token once, in the file or in the environment`,
        });
    }
    errors.push(...checkTenants(t.tenants, `${path}.tenants`));
  });
  return errors;
}

function checkTenants(tenants: unknown, path: string): FieldError[] {
  if (!Array.isArray(tenants)) return [];
  const errors: FieldError[] = [];
  const first = new Map<string, number>();
  (tenants as unknown[]).forEach((tenant, k) => {
    const at = `${path}[${k}]`;
    if (typeof tenant !== 'string') {
      errors.push({ path: at, message: 'must be a string (quote numbers and booleans)' });
      return;
    }
    // A value the selector normalization could never produce would silently never match.
    if (tenant !== tenant.trim() || valueProblem(tenant) !== undefined) {
      errors.push({ path: at, message: TENANT_RULE });
      return;
    }
    const seen = first.get(tenant);
    if (seen === undefined) first.set(tenant, k);
    else errors.push({ path: at, message: `repeats ${path}[${seen}]` });
  });
  return errors;
}
