import { Type, type Static } from '@sinclair/typebox';

/**
 * The operator console's read and control calls (served by the projector, one by the decision API).
 * The console is a client of these like any other: it shows what they answer, nothing more.
 */

const Iso = (description?: string) =>
  Type.String({ format: 'date-time', ...(description && { description }) });
const Count = (description?: string) => Type.Integer({ minimum: 0, ...(description && { description }) });

/** `GET /v1/session`: what the presented token may do, so a client hides what it may not see. */
export const SessionSchema = Type.Object(
  {
    name: Type.String({ description: 'The token’s name in the tokens file (never the token).' }),
    roles: Type.Array(
      Type.Union([
        Type.Literal('decide'),
        Type.Literal('query'),
        Type.Literal('admin'),
        Type.Literal('overrides:read'),
        Type.Literal('overrides:write'),
      ]),
    ),
    tenants: Type.Union([Type.Array(Type.String()), Type.Null()], {
      description: 'The tenant allow-list; `null`: every tenant.',
    }),
  },
  { $id: 'Session', additionalProperties: false },
);
export type Session = Static<typeof SessionSchema>;

/** One reload of the policy file, as the decision API remembers it (the last 20, newest first). */
export const PolicyReloadsSchema = Type.Object(
  {
    reloads: Type.Array(
      Type.Object(
        {
          at: Iso(),
          trigger: Type.Union([Type.Literal('file'), Type.Literal('request')]),
          outcome: Type.Union([Type.Literal('applied'), Type.Literal('unchanged'), Type.Literal('rejected')]),
          version: Type.Union([Type.String(), Type.Null()], { description: 'Null when rejected.' }),
          errors: Type.Array(Type.Object({ path: Type.String(), message: Type.String() })),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { $id: 'PolicyReloads', additionalProperties: false },
);
export type PolicyReloads = Static<typeof PolicyReloadsSchema>;

/** `POST /v1/policies:simulate`: a proposed policy file and the recorded range to replay it over. */
export const SimulateRequestSchema = Type.Object(
  {
    policies: Type.String({
      minLength: 1,
      maxLength: 1_048_576,
      description: 'The proposed file (YAML or JSON).',
    }),
    from: Type.String({
      minLength: 1,
      maxLength: 64,
      description: 'Start of the range of recorded decisions (inclusive), ISO 8601.',
    }),
    to: Type.String({
      minLength: 1,
      maxLength: 64,
      description: 'End of the range (exclusive), ISO 8601; at most 24 h after `from`.',
    }),
    tenant: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })),
  },
  { $id: 'SimulateRequest', additionalProperties: false },
);
export type SimulateRequest = Static<typeof SimulateRequestSchema>;

const Tally = Type.Object({ applied: Count(), allowed: Count(), denied: Count() });
/** The recorded decisions of the range re-evaluated under the proposed set (`tally simulate --json`). */
export const SimulationSchema = Type.Object(
  {
    policySetVersion: Type.String({ description: 'Version of the proposed set.' }),
    from: Iso(),
    to: Iso(),
    decisions: Count('Recorded decisions in the range.'),
    recordsRead: Count(),
    invalid: Count('Records that were no valid event of their topic.'),
    actual: Type.Object({ allowed: Count(), denied: Count() }),
    simulated: Type.Object({ allowed: Count(), denied: Count() }),
    changed: Type.Object({ allowedToDenied: Count(), deniedToAllowed: Count() }),
    policies: Type.Array(
      Type.Object({
        policy: Type.String(),
        proposed: Type.Boolean(),
        recorded: Type.Boolean(),
        actual: Tally,
        simulated: Tally,
      }),
    ),
  },
  { $id: 'Simulation' },
);

/** `GET /v1/namespaces`: the projection namespaces with their replay state. */
export const NamespacesSchema = Type.Object(
  {
    namespaces: Type.Array(
      Type.Object({
        name: Type.String(),
        active: Type.Boolean(),
        events: Count(),
        updated: Type.Union([Iso(), Type.Null()]),
        shards: Count(),
        replay: Type.Optional(
          Type.String({ description: '`running` or `complete`; absent: made by the projector.' }),
        ),
      }),
    ),
  },
  { $id: 'Namespaces', additionalProperties: false },
);

/** `POST /v1/namespaces:switch`: the name twice, so a switch is never one click or one typo. */
export const NamespaceSwitchSchema = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200 }),
    confirm: Type.String({ minLength: 1, maxLength: 200, description: 'Must equal `name`.' }),
    force: Type.Optional(Type.Boolean({ description: 'Also switch to a replay that is still running.' })),
  },
  { $id: 'NamespaceSwitch', additionalProperties: false },
);
export type NamespaceSwitch = Static<typeof NamespaceSwitchSchema>;

export const NamespaceSwitchedSchema = Type.Object(
  { previous: Type.Union([Type.String(), Type.Null()]), active: Type.String() },
  { $id: 'NamespaceSwitched', additionalProperties: false },
);

/** `GET /v1/pipeline`: outbox, consumer group and dead letters, as `tally consumers status` sees them. */
export const PipelineSchema = Type.Object(
  {
    outbox: Type.Union(
      [
        Type.Object({
          sampled_at: Iso(),
          length: Count('Entries in all outbox streams.'),
          pending: Count('Delivered to a relay, not yet acknowledged.'),
          oldest_age_seconds: Type.Number({ minimum: 0 }),
        }),
        Type.Null(),
      ],
      { description: 'From the relay’s metrics; null without `TALLY_CONSOLE_RELAY_URL` or before a sample.' },
    ),
    consumers: Type.Object(
      { group: Type.String(), state: Type.String(), totalLag: Count() },
      { description: 'As `tally consumers status --json`: also `members` and `partitions`.' },
    ),
    dead_letters: Type.Array(
      Type.Object({
        topic: Type.String(),
        partition: Count(),
        offset: Type.String(),
        timestamp: Iso(),
        source: Type.String(),
        reason: Type.String(),
        key: Type.Union([Type.String(), Type.Null()]),
        origin: Type.Union([Type.String(), Type.Null()], {
          description:
            'Where the record came from (`topic`, `partition`, `offset` are its place on the dead-letter topic): the projector’s `topic/partition @offset`, the relay’s `outbox <stream> entry <id>` or `denials shard <n> field <f>`; null when unknown.',
        }),
      }),
      { description: 'The newest dead letters (at most 50), newest first.' },
    ),
  },
  { $id: 'Pipeline', additionalProperties: false },
);

/** One sampled rate series: per-second rates between consecutive samples. */
const Series = Type.Object({
  label: Type.String({ description: '`denied`, `would_deny · p1`, `burst_quota_exhausted`…' }),
  points: Type.Array(Type.Array(Type.Number(), { minItems: 2, maxItems: 2 }), {
    description: '[epoch ms of the sample, per-second rate since the previous one].',
  }),
});

/** `GET /v1/overview`: the last hour of the decision API's counters and every component's health. */
export const OverviewSchema = Type.Object(
  {
    interval_ms: Count('Sampling interval (`TALLY_CONSOLE_SAMPLE_INTERVAL`).'),
    decisions: Type.Array(Series, {
      description: 'Decisions/s by outcome (`tally_decisions_total`: each decision once).',
    }),
    policies: Type.Array(Series, {
      description:
        'Applicable policies/s by what each said, `outcome · policy` (`tally_policy_decisions_total`), and `allowed · (unmatched)`: decisions no policy applied to.',
    }),
    denials: Type.Array(Series, { description: 'Denials (429)/s by reason.' }),
    degraded: Type.Array(Series, { description: 'Degraded decisions/s by cause.' }),
    health: Type.Record(
      Type.String(),
      Type.Object({
        status: Type.Union([
          Type.Literal('healthy'),
          Type.Literal('degraded'),
          Type.Literal('unavailable'),
          Type.Literal('unreachable'),
          Type.Literal('not_configured'),
        ]),
        components: Type.Record(Type.String(), Type.Object({ status: Type.String() })),
      }),
      { description: '`projector`, `decision-api`, `relay`: their /readyz.' },
    ),
  },
  { $id: 'Overview', additionalProperties: false },
);
