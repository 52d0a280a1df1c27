import { Type, type Static } from '@sinclair/typebox';

const Role = Type.Union([Type.Literal('burst'), Type.Literal('sustained')]);
const Mode = Type.Union([Type.Literal('enforce'), Type.Literal('shadow')]);
const Algorithm = Type.Union([
  Type.Literal('fixed_window'),
  Type.Literal('sliding_window'),
  Type.Literal('token_bucket'),
  Type.Literal('calendar_month'),
  Type.Literal('concurrency'),
  Type.Literal('gcra'),
]);
/** What both views of a window start with: which window it is and its limit. */
const windowFields = () => ({
  name: Type.String(),
  role: Role,
  algorithm: Algorithm,
  limit: Type.Integer({ minimum: 0 }),
  burst: Type.Optional(
    Type.Integer({ minimum: 1, description: '`gcra` only: how many units may pass at once.' }),
  ),
});
const Match = Type.Record(Type.String(), Type.Array(Type.String()), {
  description: 'Attribute or selector name → accepted values.',
});

/** `GET /v1/policies`: the policy set in force, as compiled. */
export const PolicyListSchema = Type.Object(
  {
    version: Type.String({ description: 'Content hash of the policy file in force.' }),
    loaded_at: Type.String({ format: 'date-time' }),
    policies: Type.Array(
      Type.Object(
        {
          name: Type.String(),
          match: Match,
          unless: Match,
          key: Type.Array(Type.String(), { description: 'Selector dimensions of the counter key.' }),
          group: Type.Union([Type.String(), Type.Null()]),
          mode: Mode,
          enabled: Type.Boolean(),
          max_cost: Type.Integer({ minimum: 0 }),
          on_backend_failure: Type.Union([
            Type.Literal('fail_open'),
            Type.Literal('fail_closed'),
            Type.Literal('local_fallback'),
          ]),
          local_fallback_overflow: Type.Optional(
            Type.Union([Type.Literal('fail_open'), Type.Literal('fail_closed')], {
              description:
                'Only with `local_fallback`: what a key gets when the in-memory key bound is full.',
            }),
          ),
          windows: Type.Array(
            Type.Object(
              {
                ...windowFields(),
                period: Type.String({
                  description:
                    'As written: `1s`, `1h`, `1mo`…; a `concurrency` window shows its `lease_ttl`.',
                }),
              },
              { additionalProperties: false },
            ),
          ),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { $id: 'PolicyList', additionalProperties: false },
);
export type PolicyList = Static<typeof PolicyListSchema>;

/** `GET /v1/policies/{name}/state`: one policy's counters for the selectors in the query. */
export const PolicyStateSchema = Type.Object(
  {
    policy: Type.String(),
    mode: Mode,
    key: Type.String({ description: 'The composite key value the selectors map to.' }),
    now_ms: Type.Number({ description: 'Redis time of the reading, epoch ms.' }),
    windows: Type.Array(
      Type.Object(
        {
          ...windowFields(),
          period_ms: Type.Number(),
          remaining: Type.Number({ description: 'Units left now.' }),
          reset_ms: Type.Number({ description: 'Milliseconds until the window is back to its full limit.' }),
          counters: Type.Record(Type.String(), Type.Number(), {
            description:
              'The counters as stored: `bucket` + `count` (fixed/calendar), `bucket` + `current`/`previous` ' +
              '(sliding), `tokens` + `updated_ms` (token bucket), `tat_ms` (gcra: its theoretical arrival ' +
              'time). Empty when nothing is counted.',
          }),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { $id: 'PolicyState', additionalProperties: false },
);
export type PolicyState = Static<typeof PolicyStateSchema>;

/** `POST /v1/policies:reload`: the version now in force and whether it changed. */
export const PolicyReloadSchema = Type.Object(
  { version: Type.String(), changed: Type.Boolean() },
  { $id: 'PolicyReload', additionalProperties: false },
);
export type PolicyReload = Static<typeof PolicyReloadSchema>;

/** `POST /v1/tokens:reload`: the tokens file version now in force, and how many tokens it holds. */
export const TokensReloadSchema = Type.Object(
  { version: Type.String(), changed: Type.Boolean(), tokens: Type.Integer({ minimum: 0 }) },
  { $id: 'TokensReload', additionalProperties: false },
);
export type TokensReload = Static<typeof TokensReloadSchema>;
