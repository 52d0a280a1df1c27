import { Type, type Static } from '@sinclair/typebox';

/** One field problem of a refused request: where (`selectors.tenant`, `requests[3].cost`) and what. */
export const FieldErrorSchema = Type.Object(
  {
    path: Type.String({ description: 'Where: `selectors.tenant`, `requests[3].cost`; `` for the body.' }),
    message: Type.String({ description: 'What is wrong, for people; never echoes the value.' }),
  },
  { $id: 'FieldError', additionalProperties: false },
);
export type FieldError = Static<typeof FieldErrorSchema>;

/** The properties of every error body, reused where an error sits beside other fields (batch items). */
export const ERROR_BODY_PROPERTIES = {
  code: Type.String({ description: 'Stable machine-readable code (the error table); branch on it.' }),
  message: Type.String({ description: 'Human-readable detail; never branch on it.' }),
  errors: Type.Optional(
    Type.Array(FieldErrorSchema, { description: 'With `request.invalid`: every field problem.' }),
  ),
};

/** `{code, message, errors?}`: the body of every refusal that is not a decision, in every Tally API. */
export const ErrorBodySchema = Type.Object(ERROR_BODY_PROPERTIES, {
  $id: 'ErrorBody',
  additionalProperties: false,
});
export type ErrorBody = Static<typeof ErrorBodySchema>;
