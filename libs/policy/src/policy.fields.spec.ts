import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
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
const EVERY_FIELD = readFileSync(
  resolve(__dirname, '../../../test/fixtures/policies/every-field.yaml'),
  'utf8',
);

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
