import { Type, type Static } from '@sinclair/typebox';
import { DECISION_BODY_PROPERTIES } from './decision-response.schema';
import { ERROR_BODY_PROPERTIES } from './error-body.schema';

/** A decided batch item: the decision body beside the status it would have had alone. */
export const BatchDecisionItemSchema = Type.Object(
  {
    status: Type.Union(
      [200, 400, 409, 413, 429, 503].map((s) => Type.Literal(s)),
      {
        description: 'The HTTP status this decision would have had as a single call.',
      },
    ),
    ...DECISION_BODY_PROPERTIES,
  },
  { $id: 'BatchDecisionItem', additionalProperties: false },
);

/** An item refused before any decision: not a valid request (400) or outside the token's tenants (403). */
export const BatchRefusedItemSchema = Type.Object(
  {
    status: Type.Union([Type.Literal(400), Type.Literal(403)]),
    allowed: Type.Literal(false),
    ...ERROR_BODY_PROPERTIES,
  },
  { $id: 'BatchRefusedItem', additionalProperties: false },
);
export type BatchRefusedItem = Static<typeof BatchRefusedItemSchema>;

/** `POST /v1/decisions:batch` answer (always 200): one result per request, in request order. */
export const BatchResponseSchema = Type.Object(
  { results: Type.Array(Type.Union([BatchDecisionItemSchema, BatchRefusedItemSchema])) },
  { $id: 'BatchResponse', additionalProperties: false },
);
export type BatchResponseBody = Static<typeof BatchResponseSchema>;
