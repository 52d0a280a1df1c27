import {
  AuditQuerySchema,
  TopKeysQuerySchema,
  UsageQuerySchema,
  type AuditResponse,
  type TopKeysResponse,
  type UsageResponse,
} from '@tally/api-contract';
import type { TObject } from '@sinclair/typebox';
import { GRANULARITIES, type AuditView, type TopKeysView, type UsageView } from '@tally/projections';
import { getMetadataStorage } from 'class-validator';
import { describe, expect, it } from 'vitest';
import { AuditQueryDto } from './audit-query.dto';
import { TopKeysQueryDto } from './top-keys-query.dto';
import { UsageQueryDto } from './usage-query.dto';

/**
 * The class-validator DTOs validate the queries; the contract's TypeBox schemas publish them. This
 * holds the two equal (parameter names, which are required, the granularities), so neither drifts.
 */
/**
 * Compile time: each body the query code builds is one its published schema accepts (typecheck fails
 * otherwise). The lib keeps its own view types: it does not depend on the contract.
 */
type DeepReadonly<T> = T extends (infer U)[]
  ? readonly DeepReadonly<U>[]
  : T extends object
    ? { readonly [K in keyof T]: DeepReadonly<T[K]> }
    : T;
type Fits<View, Body> = [View] extends [DeepReadonly<Body>] ? true : false;
type Holds<T extends true> = T;
export type ViewsFitTheContract = [
  Holds<Fits<UsageView, UsageResponse>>,
  Holds<Fits<TopKeysView, TopKeysResponse>>,
  Holds<Fits<AuditView, AuditResponse>>,
];

const CASES = [
  { dto: UsageQueryDto, schema: UsageQuerySchema },
  { dto: TopKeysQueryDto, schema: TopKeysQuerySchema },
  { dto: AuditQueryDto, schema: AuditQuerySchema },
] as const;

function dtoFields(dto: new () => object): { names: string[]; required: string[] } {
  const metadata = getMetadataStorage().getTargetValidationMetadatas(dto, '', false, false);
  const names = [...new Set(metadata.map((m) => m.propertyName))].sort();
  const optional = new Set(
    metadata.filter((m) => m.type === 'conditionalValidation').map((m) => m.propertyName),
  );
  return { names, required: names.filter((n) => !optional.has(n)) };
}

describe('query DTOs against the contract schemas', () => {
  for (const { dto, schema } of CASES) {
    it(`${dto.name} has exactly the parameters of ${schema.$id}, the same ones required`, () => {
      const { names, required } = dtoFields(dto);

      expect(names).toEqual(Object.keys(schema.properties).sort());
      expect(required).toEqual([...(schema.required ?? [])].sort());
    });
  }

  it('publishes the granularities the parsers accept', () => {
    for (const schema of [UsageQuerySchema, TopKeysQuerySchema] as TObject[]) {
      const granularity = schema.properties.granularity as unknown as { anyOf: { const: string }[] };
      expect(granularity.anyOf.map((g) => g.const)).toEqual([...GRANULARITIES]);
    }
  });
});
