import {
  BatchEnvelopeSchema,
  DecisionRequestSchema,
  type BatchEnvelope,
  type DecisionRequestBody,
} from '@tally/api-contract';
import { type DecisionRequest } from '@tally/engine';
import { compileSchemaCheck, type Validated } from '@tally/http';

/**
 * Shape checks of the two hot routes: the contract's JSON Schemas, compiled once when this module
 * loads (see libs/http schema-validator.ts). The engine judges the values (selector names and values,
 * cost against max_cost, the idempotency key's alphabet).
 */
const checkRequest = compileSchemaCheck(DecisionRequestSchema);
const checkEnvelope = compileSchemaCheck(BatchEnvelopeSchema);

/**
 * `POST /v1/decisions`. A body that is not an object is judged field by field like one, so the
 * caller reads what is missing (`selectors`) and, for an array, that its indexes are not fields.
 */
export function checkDecisionBody(body: unknown): Validated<DecisionRequest> {
  return asRequest(checkRequest(asFields(body)));
}

/** One item of a batch at `path` (`requests[3]`): an item that is not an object is refused as such. */
export function checkDecisionItem(item: unknown, path: string): Validated<DecisionRequest> {
  return asRequest(checkRequest(item, path));
}

/** `POST /v1/decisions:batch`: the envelope, its items not yet checked (each is judged on its own). */
export function checkBatchBody(body: unknown): Validated<BatchEnvelope> {
  return checkEnvelope(asFields(body));
}

function asFields(body: unknown): unknown {
  if (Array.isArray(body)) return { ...body };
  return typeof body === 'object' && body !== null ? body : {};
}

/** The schema's default filled `cost` in (ajv `useDefaults`): the engine's request, as checked. */
function asRequest(checked: Validated<DecisionRequestBody>): Validated<DecisionRequest> {
  return checked as Validated<DecisionRequest>;
}
