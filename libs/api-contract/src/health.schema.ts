import { Type, type Static } from '@sinclair/typebox';

/** `GET /healthz`: the process answers (never touches a dependency). */
export const LivenessSchema = Type.Object(
  { status: Type.Literal('ok') },
  { $id: 'Liveness', additionalProperties: false },
);
export type Liveness = Static<typeof LivenessSchema>;

/** `GET /readyz`: the overall state and each component's; `detail` only for the admin token. */
export const ReadinessSchema = Type.Object(
  {
    status: Type.Union([Type.Literal('healthy'), Type.Literal('degraded'), Type.Literal('unavailable')]),
    components: Type.Record(
      Type.String(),
      Type.Object(
        {
          status: Type.Union([Type.Literal('up'), Type.Literal('degraded'), Type.Literal('down')]),
          detail: Type.Optional(Type.String({ description: 'Admin token only: the driver’s own words.' })),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { $id: 'Readiness', additionalProperties: false },
);
export type Readiness = Static<typeof ReadinessSchema>;
