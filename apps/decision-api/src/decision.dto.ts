import {
  ArrayMaxSize,
  ArrayMinSize,
  IsArray,
  IsDefined,
  IsObject,
  IsString,
  ValidateBy,
  ValidateIf,
} from 'class-validator';

/**
 * Optional means absent, not null: `IsOptional` would let `"cost": null` through as "no cost" and
 * charge the default of 1 for what is a malformed request.
 */
const IfPresent = (): PropertyDecorator => ValidateIf((_object, value) => value !== undefined);

/** One rule, one message: a string or a negative number is told the same thing, not two half-truths. */
const IsCost = (): PropertyDecorator =>
  ValidateBy(
    {
      name: 'isCost',
      validator: { validate: (v) => typeof v === 'number' && Number.isInteger(v) && v >= 0 },
    },
    { message: 'cost must be a whole number ≥ 0' },
  );

export const MAX_BATCH = 1000;

/**
 * `POST /v1/decisions` body. Shapes only: the engine normalizes and validates values (selector
 * identity, cost against max_cost — 413 however large —, the idempotency key's alphabet and length)
 * and answers with the decision codes.
 */
export class DecisionRequestDto {
  /** `tenant`, `principal`, `token`, `client`, `route` → string. */
  @IsDefined({ message: 'selectors is required' })
  @IsObject({ message: 'selectors must be an object of strings' })
  selectors!: Record<string, unknown>;

  /** Free attributes for `match` / `unless`. */
  @IfPresent()
  @IsObject({ message: 'attributes must be an object of strings' })
  attributes?: Record<string, unknown>;

  /** Units to spend; defaults to 1. 0 reports state without consuming. */
  @IfPresent()
  @IsCost()
  cost?: number;

  /**
   * Replays the stored decision for the same request; 409 for a different one. 1..255 printable ASCII
   * characters, judged by the engine (400 `idempotency_key.invalid`).
   */
  @IfPresent()
  @IsString({ message: 'idempotency_key must be a string' })
  idempotency_key?: string;
}

/**
 * `POST /v1/decisions:batch` body: independent decisions, each answered on its own. Only the list is
 * checked here; each item is validated on its own, so one bad item gets its own 400 result instead of
 * failing the decisions around it.
 */
export class BatchRequestDto {
  @IsArray({ message: 'requests must be an array' })
  @ArrayMinSize(1, { message: 'requests must hold at least 1 decision' })
  @ArrayMaxSize(MAX_BATCH, { message: `requests must hold at most ${MAX_BATCH} decisions` })
  requests!: unknown[];
}
