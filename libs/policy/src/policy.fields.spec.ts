import { getMetadataStorage } from 'class-validator';
import { describe, expect, it } from 'vitest';
import { PolicyDto, WindowDto } from './policy-file.dto';
import { compilePolicyFile } from './policy.compiler';
import { POLICY_FILE_FIELDS, WINDOW_FILE_FIELDS } from './policy.fields';

/** The properties class-validator knows on a DTO class: what a policy file may hold. */
function dtoProperties(target: new () => object): string[] {
  const metadata = getMetadataStorage().getTargetValidationMetadatas(target, '', true, false);
  return [...new Set(metadata.map((m) => m.propertyName))].sort();
}

/** A file that sets every field a policy and its windows can have. */
const EVERY_FIELD = `
policies:
  - name: api
    match: { route: [evaluate] }
    unless: { principal_class: self }
    match_prefix: { route: [batch_] }
    unless_prefix: { principal: [test-] }
    key: [tenant]
    windows:
      - { name: burst, role: burst, algorithm: gcra, limit: 10, period: 1s, burst: 5 }
    max_cost: 5
    on_backend_failure: local_fallback
    local_fallback_overflow: fail_open
    mode: shadow
    enabled: false
    group: paid
`;

describe('POLICY_FILE_FIELDS', () => {
  it("names every property of the policy file's DTO, and only those", () => {
    expect(dtoProperties(PolicyDto)).toEqual(Object.values(POLICY_FILE_FIELDS).sort());
  });

  it("names every property of a window's DTO, and only those", () => {
    expect(dtoProperties(WindowDto)).toEqual(Object.values(WINDOW_FILE_FIELDS).flat().sort());
  });

  it('is what the compiler fills: a file with every field compiles into a policy with every field', () => {
    const sut = compilePolicyFile(EVERY_FIELD);
    if (!sut.ok) throw new Error(JSON.stringify(sut.errors));
    const [policy] = sut.set.policies;
    expect(Object.keys(policy).sort()).toEqual(Object.keys(POLICY_FILE_FIELDS).sort());
    expect(Object.keys(policy.windows[0]).sort()).toEqual(Object.keys(WINDOW_FILE_FIELDS).sort());
  });
});
