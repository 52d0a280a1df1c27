import { ValidateBy, type ValidationOptions } from 'class-validator';

/** A flat JSON object of string values: selectors and attributes never nest. */
export function IsStringRecord(options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'isStringRecord',
      validator: {
        validate: (value: unknown) =>
          typeof value === 'object' &&
          value !== null &&
          !Array.isArray(value) &&
          Object.values(value).every((v) => typeof v === 'string'),
        defaultMessage: (args) => `${args?.property ?? 'value'} must be an object of string values`,
      },
    },
    options,
  );
}
