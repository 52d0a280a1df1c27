import { type ValidationError, ValidationPipe } from '@nestjs/common';
import { ApiError, type FieldError } from './api-error';

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
 * Bodies and queries are validated with class-validator DTOs: unknown fields are refused (a typo in
 * `idempotency_key` must not silently drop idempotency), and no implicit type conversion happens.
 */
export function strictValidationPipe(): ValidationPipe {
  return new ValidationPipe({
    whitelist: true,
    forbidNonWhitelisted: true,
    transform: true,
    transformOptions: { enableImplicitConversion: false },
    validationError: { target: false, value: false },
    exceptionFactory: (errors) =>
      new ApiError(400, 'request.invalid', 'the request is invalid', fieldErrors(errors)),
  });
}
