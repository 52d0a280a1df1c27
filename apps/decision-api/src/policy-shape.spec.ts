import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { TObject, TSchema } from '@sinclair/typebox';
import { PolicyListSchema } from '@tally/api-contract';
import type { DecisionService } from '@tally/engine';
import {
  ALGORITHMS,
  compilePolicyFile,
  FAIL_MODES,
  OVERFLOW_MODES,
  POLICY_FILE_FIELDS,
  POLICY_MODES,
  WINDOW_FILE_FIELDS,
  WINDOW_ROLES,
  type PolicyStore,
} from '@tally/policy';
import { describe, expect, it } from 'vitest';
import { PoliciesController } from './policies.controller';
import type { PolicyReloadHistory } from './policy-reloads.history';

/**
 * The control API's view of a policy (`GET /v1/policies`, api-contract's `PolicyListSchema`) held to
 * the one list of a policy's fields (`POLICY_FILE_FIELDS`, @tally/policy), field by field: the
 * schema cannot import the policy lib (it is the contract layer), so this test is what keeps them one.
 */
const policySchema = (PolicyListSchema.properties.policies as unknown as { items: TObject }).items;
const windowSchema = (policySchema.properties.windows as unknown as { items: TObject }).items;

/**
 * Fields of the file the control view does not show: the prefix matches (`match_prefix`,
 * `unless_prefix`) are not in the published contract, and a `concurrency` window's `lease_ttl`
 * is shown as its `period`.
 */
const NOT_SHOWN = ['match_prefix', 'unless_prefix', 'lease_ttl'];

function enumOf(schema: TSchema): string[] {
  const literals = (schema.anyOf as TSchema[] | undefined) ?? [schema];
  return literals.map((s) => s.const as string);
}

/** A file that sets every field a policy and its windows can have. */
const EVERY_FIELD = readFileSync(
  resolve(__dirname, '../../../test/fixtures/policies/every-field.yaml'),
  'utf8',
);

describe('the control view of a policy', () => {
  it('has a property for every field of a policy, and only those', () => {
    const fields = Object.values(POLICY_FILE_FIELDS).filter((f) => !NOT_SHOWN.includes(f));
    expect(Object.keys(policySchema.properties).sort()).toEqual(fields.sort());
  });

  it('has a property for every field of a window, and only those', () => {
    const fields = Object.values(WINDOW_FILE_FIELDS)
      .flat()
      .filter((f) => !NOT_SHOWN.includes(f));
    expect(Object.keys(windowSchema.properties).sort()).toEqual(fields.sort());
  });

  it('accepts exactly the values the policy file accepts', () => {
    const p = policySchema.properties;
    expect(enumOf(p.mode)).toEqual([...POLICY_MODES]);
    expect(enumOf(p.on_backend_failure)).toEqual([...FAIL_MODES]);
    expect(enumOf(p.local_fallback_overflow)).toEqual([...OVERFLOW_MODES]);
    expect(enumOf(windowSchema.properties.role)).toEqual([...WINDOW_ROLES]);
    expect(enumOf(windowSchema.properties.algorithm)).toEqual([...ALGORITHMS]);
  });

  it("is what the controller writes for a policy with every field (the schema's every property)", () => {
    // given a compiled policy that sets every field the view shows
    const compiled = compilePolicyFile(EVERY_FIELD);
    if (!compiled.ok) throw new Error(JSON.stringify(compiled.errors));
    const store = { current: compiled.set } as unknown as PolicyStore;
    const sut = new PoliciesController(store, {} as DecisionService, {} as PolicyReloadHistory);
    // when the control API lists it
    const [policy] = sut.list().policies;
    // then it writes every property of the schema, and only those
    expect(Object.keys(policy).sort()).toEqual(Object.keys(policySchema.properties).sort());
    expect(Object.keys(policy.windows[0]).sort()).toEqual(Object.keys(windowSchema.properties).sort());
  });
});
