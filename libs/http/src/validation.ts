import { type ValidationError, ValidationPipe } from '@nestjs/common';
import { plainToInstance } from 'class-transformer';
import { validateSync, type ValidatorOptions } from 'class-validator';
import { ApiError, type FieldError } from '@tally/errors';

/** Flatten class-validator's tree into `path: message` pairs (`requests.3.cost` → `requests[3].cost`). */
export function fieldErrors(errors: readonly ValidationError[], parent = ''): FieldError[] {
  return errors.flatMap((error) => {
    const path = /^\d+$/.test(error.property)
      ? `${parent}[${error.property}]`
      : parent
        ? `${parent}.${error.property}`
        : error.property;
    const own = Object.values(error.constraints ?? {}).map((message) => ({ path, message }));
    return [...own, ...fieldErrors(error.children ?? [], path)];
  });
}

/**
 * Unknown fields are refused (a typo in `idempotency_key` must not silently drop idempotency), and
 * no implicit type conversion happens (`"3"` is not a cost).
 */
const VALIDATOR_OPTIONS: ValidatorOptions = {
  whitelist: true,
  forbidNonWhitelisted: true,
  validationError: { target: false, value: false },
};

/** Bodies and queries declared as class-validator DTOs are validated with the options above. */
export function strictValidationPipe(): ValidationPipe {
  return new ValidationPipe({
    ...VALIDATOR_OPTIONS,
    transform: true,
    transformOptions: { enableImplicitConversion: false },
    exceptionFactory: (errors) =>
      new ApiError(400, 'request.invalid', 'the request is invalid', fieldErrors(errors)),
  });
}

export type Validated<T> =
  { readonly ok: true; readonly value: T } | { readonly ok: false; readonly errors: readonly FieldError[] };

/**
 * One value against a DTO, exactly as the pipe would check a body, for inputs that are judged one by
 * one (the items of a batch, where one bad item must not sink the others). `path` prefixes the errors.
 */
export function validateAs<T extends object>(dto: new () => T, plain: unknown, path: string): Validated<T> {
  if (typeof plain !== 'object' || plain === null || Array.isArray(plain)) {
    return { ok: false, errors: [{ path, message: 'must be an object' }] };
  }
  const value = plainToInstance(dto, plain, { enableImplicitConversion: false });
  const errors = validateSync(value, VALIDATOR_OPTIONS);
  return errors.length === 0 ? { ok: true, value } : { ok: false, errors: fieldErrors(errors, path) };
}
