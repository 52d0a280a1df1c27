import 'reflect-metadata';
import { Type } from 'class-transformer';
import { ValidateBy, ValidateIf, ValidateNested, type ValidationArguments } from 'class-validator';
import { ROLES } from './access.decorator';

/**
 * The tokens file exactly as written (`TALLY_TOKENS_FILE`, YAML or JSON), validated like the policy
 * file: one message per field (`stopAtFirstError`), `is required` for an absent field, unknown fields
 * refused. Messages never repeat a value: a token pasted where its digest belongs must not reach a log.
 */

/** Token names end up in logs: kept as plain as policy names. */
export const TOKEN_NAME = /^[a-z0-9][a-z0-9_.-]{0,63}$/;
const SHA256_HEX = /^[0-9a-f]{64}$/;
const NESTED = 'each entry must be a mapping';

function Rule(name: string, problem: (value: unknown) => string | undefined): PropertyDecorator {
  return ValidateBy({
    name,
    validator: {
      validate: (value: unknown) => problem(value) === undefined,
      defaultMessage: (args?: ValidationArguments) =>
        args?.value === undefined ? 'is required' : (problem(args?.value) ?? ''),
    },
  });
}

const roleProblem = (v: unknown): string | undefined => {
  const all = ROLES.join(', ');
  if (!Array.isArray(v) || v.length === 0) return `must be a non-empty list of roles (${all})`;
  const unknown = v.filter((r) => !(ROLES as readonly unknown[]).includes(r));
  // A plain word is shown (a typo to spot); anything else might be a pasted secret.
  const shown = unknown.map((r) =>
    typeof r === 'string' && /^[a-z_]{1,16}$/.test(r) ? `"${r}"` : '(a value)',
  );
  if (unknown.length > 0) return `unknown role ${shown.join(', ')}; must be among ${all}`;
  if (new Set(v).size !== v.length) return 'must not repeat a role';
  // The admin token opens reloads and every tenant's counters: handing it to a service as its caller
  // token is exactly the mix-up that boot refuses for TALLY_ADMIN_TOKEN.
  if (v.includes('admin') && v.some((r) => r === 'decide' || r === 'query'))
    return 'admin cannot be combined with decide or query: an admin token must not also be a caller token';
  // `console` already holds query and admin; beside decide it would be a caller token that operates.
  if (v.includes('console') && v.some((r) => r !== 'console'))
    return 'console stands alone: it holds query and admin (never decide)';
  return undefined;
};

/** The list itself; its entries are judged one by one (with their index) in token-file.checks.ts. */
const tenantsProblem = (v: unknown): string | undefined =>
  Array.isArray(v) && v.length > 0
    ? undefined
    : 'must be a non-empty list of tenants (omit it for every tenant)';

export class TokenEntryDto {
  @Rule('isTokenName', (v) =>
    typeof v === 'string' && TOKEN_NAME.test(v) ? undefined : 'must match [a-z0-9][a-z0-9_.-]{0,63}',
  )
  name!: unknown;

  @Rule('isSha256', (v) =>
    typeof v === 'string' && SHA256_HEX.test(v)
      ? undefined
      : 'must be 64 lowercase hex characters: the SHA-256 of the token (tally tokens hash)',
  )
  sha256!: unknown;

  @Rule('isRoles', roleProblem)
  roles!: unknown;

  // Only absent means "every tenant": a `tenants:` left empty (null) must not widen a token to all.
  @ValidateIf((_object, value) => value !== undefined)
  @Rule('isTenants', tenantsProblem)
  tenants?: unknown;
}

export class TokenFileDto {
  @Rule('isTokenList', (v) => (Array.isArray(v) ? undefined : 'must be a list of tokens'))
  @ValidateNested({ each: true, message: NESTED })
  @Type(() => TokenEntryDto)
  tokens!: unknown;
}
