import { type DecisionRequest } from '@tally/engine';
import type { FieldError } from '@tally/errors';
import { MAX_BATCH } from '@tally/api-contract';

/**
 * BASELINE ONLY: the hand-written checks that decision-body.ts (the contract's compiled JSON Schema)
 * replaced, kept unchanged for decision-body.measure.spec.ts to time against. Not used by any app.
 *
 * Shape checks of the two hot routes, hand-written: class-validator + class-transformer cost ≈ 46 µs
 * per request and 1.5 ms per batch of 100 in the benchmark. They answer EXACTLY what the global
 * `ValidationPipe` and `validateAs` answer for the DTOs of decision.dto.ts — same paths, messages and
 * order, quirks included — and hot-body.spec.ts holds them to it, input by input, against the real
 * pipe. The DTOs stay the reference (and the documentation) of the shapes.
 */
export type Checked<T> =
  { readonly ok: true; readonly value: T } | { readonly ok: false; readonly errors: FieldError[] };

/** `{ requests }` of a batch call, its items not yet checked (each is judged on its own). */
export interface BatchBody {
  readonly requests: unknown[];
}

const DECISION_FIELDS = new Set(['selectors', 'attributes', 'cost', 'idempotency_key']);
const BATCH_FIELDS = new Set(['requests']);

/**
 * Names that class-transformer never copies onto a DTO (the instance already has a function of that
 * name, from Object.prototype): such a key vanishes silently instead of being an unknown field.
 */
const INHERITED_FUNCTIONS = new Set(
  Object.getOwnPropertyNames(Object.prototype).filter(
    (name) => typeof (Object.prototype as Record<string, unknown>)[name] === 'function',
  ),
);

/** `POST /v1/decisions`: the body as the validation pipe judges it (cost defaults to 1). */
export function checkDecisionBody(body: unknown): Checked<DecisionRequest> {
  stripProtoKeys(body);
  if (Array.isArray(body)) {
    // The pipe validates an array as the DTO: every index is an unknown field, and selectors is absent.
    const errors = body.map((_, i) => unknownField('', String(i)));
    return { ok: false, errors: [...errors, ...selectorErrors('', undefined)] };
  }
  // null and primitives are validated as an empty object.
  return checkFields(isRecord(body) ? body : {}, '');
}

/** One item of a batch, as `validateAs(DecisionRequestDto, item, path)` judges it. */
export function checkDecisionItem(item: unknown, path: string): Checked<DecisionRequest> {
  if (!isRecord(item)) return { ok: false, errors: [{ path, message: 'must be an object' }] };
  return checkFields(item, path);
}

/** `POST /v1/decisions:batch`: the envelope as the validation pipe judges it. */
export function checkBatchBody(body: unknown): Checked<BatchBody> {
  stripProtoKeys(body);
  const errors: FieldError[] = [];
  let record: Record<string, unknown> = {};
  if (Array.isArray(body)) body.forEach((_, i) => errors.push(unknownField('', String(i))));
  else if (isRecord(body)) record = body;
  for (const key of Object.keys(record))
    if (!BATCH_FIELDS.has(key) && !INHERITED_FUNCTIONS.has(key)) errors.push(unknownField('', key));
  const requests = record.requests;
  const isArray = Array.isArray(requests);
  // One message per failing rule, in the order class-validator runs the DTO's decorators.
  if (!isArray || requests.length > MAX_BATCH)
    errors.push({ path: 'requests', message: `requests must hold at most ${MAX_BATCH} decisions` });
  if (!isArray || requests.length < 1)
    errors.push({ path: 'requests', message: 'requests must hold at least 1 decision' });
  if (!isArray) errors.push({ path: 'requests', message: 'requests must be an array' });
  return errors.length === 0 && isArray ? { ok: true, value: { requests } } : { ok: false, errors };
}

function checkFields(raw: Record<string, unknown>, path: string): Checked<DecisionRequest> {
  const errors: FieldError[] = [];
  for (const key of Object.keys(raw))
    if (!DECISION_FIELDS.has(key) && !INHERITED_FUNCTIONS.has(key)) errors.push(unknownField(path, key));
  const { selectors, attributes, cost, idempotency_key } = raw;
  errors.push(...selectorErrors(path, selectors));
  if (attributes !== undefined && !isRecord(attributes))
    errors.push({ path: at(path, 'attributes'), message: 'attributes must be an object of strings' });
  if (cost !== undefined && !(typeof cost === 'number' && Number.isInteger(cost) && cost >= 0))
    errors.push({ path: at(path, 'cost'), message: 'cost must be a whole number ≥ 0' });
  if (idempotency_key !== undefined && typeof idempotency_key !== 'string')
    errors.push({ path: at(path, 'idempotency_key'), message: 'idempotency_key must be a string' });
  if (errors.length > 0) return { ok: false, errors };
  const value: DecisionRequest = {
    selectors: withoutInherited(selectors as Record<string, unknown>),
    ...(attributes === undefined
      ? {}
      : { attributes: withoutInherited(attributes as Record<string, unknown>) }),
    cost: cost ?? 1,
    ...(idempotency_key === undefined ? {} : { idempotency_key }),
  };
  return { ok: true, value };
}

function selectorErrors(path: string, selectors: unknown): FieldError[] {
  const errors: FieldError[] = [];
  if (selectors === undefined || selectors === null)
    errors.push({ path: at(path, 'selectors'), message: 'selectors is required' });
  if (!isRecord(selectors))
    errors.push({ path: at(path, 'selectors'), message: 'selectors must be an object of strings' });
  return errors;
}

function unknownField(path: string, key: string): FieldError {
  return { path: at(path, key), message: `property ${key} should not exist` };
}

/** `fieldErrors` paths: `requests[3].cost`, and `[0]` for an index. */
function at(parent: string, key: string): string {
  if (/^\d+$/.test(key)) return `${parent}[${key}]`;
  return parent ? `${parent}.${key}` : key;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** class-transformer's copy of a nested object drops inherited-function names too. */
function withoutInherited(value: Record<string, unknown>): Record<string, unknown> {
  for (const key in value) {
    if (INHERITED_FUNCTIONS.has(key)) {
      const copy: Record<string, unknown> = {};
      for (const k of Object.keys(value)) if (!INHERITED_FUNCTIONS.has(k)) copy[k] = value[k];
      return copy;
    }
  }
  return value;
}

/**
 * The pipe deletes own `constructor` and `prototype` keys at every depth before validating (prototype
 * pollution guard), so they are neither unknown fields nor selector names. In place, as the pipe does;
 * with a stack of its own rather than recursion, so that the depth of a body is never the depth of
 * the call stack (the JSON parser already refuses bodies deeper than MAX_JSON_DEPTH).
 */
function stripProtoKeys(body: unknown): void {
  const pending: unknown[] = [body];
  while (pending.length > 0) {
    const value = pending.pop();
    if (typeof value !== 'object' || value === null) continue;
    if (Array.isArray(value)) {
      for (const item of value) pending.push(item);
      continue;
    }
    const record = value as Partial<Record<string, unknown>>;
    delete record.prototype;
    delete record['constructor'];
    for (const key in record) pending.push(record[key]);
  }
}
