import { PROJECTOR_GROUP } from '@tally/ops';
import type { CommandSpec, ParsedArgs } from './cli-args';
import type { CliContext, CommandOutcome } from './cli-context';
import { consumersResetCommand, consumersStatusCommand } from './consumers.handler';
import { BENCHES, benchCommand } from './bench.handler';
import { overridesGet, overridesList, overridesRemove, overridesSet } from './overrides.handler';
import { policyCheck } from './policy.handler';
import { policyImportEnvoy } from './policy-import.handler';
import { projectionsDrop, projectionsList, projectionsSwitch, replayCommand } from './projections.handler';
import { reconcileCommand } from './reconcile.handler';
import { reseedCommand } from './reseed.handler';
import { simulateCommand } from './simulate.handler';
import { tokensCheck, tokensHash } from './tokens.handler';

export type Handler = (args: ParsedArgs, ctx: CliContext) => Promise<CommandOutcome>;
export interface Command extends CommandSpec {
  readonly run: Handler;
}

const group = {
  name: 'group',
  value: 'text',
  placeholder: 'GROUP',
  help: `consumer group (default ${PROJECTOR_GROUP})`,
} as const;
const topic = {
  name: 'topic',
  value: 'text',
  placeholder: 'TOPIC',
  help: 'one topic (default every topic the projector reads)',
} as const;

/** Where the overrides commands find the decision API, and their token. */
const api = [
  {
    name: 'url',
    value: 'text',
    placeholder: 'URL',
    help: 'decision API (default http://127.0.0.1:<TALLY_HTTP_PORT or 8080>)',
  },
  {
    name: 'token-file',
    value: 'text',
    placeholder: 'FILE',
    help: 'file holding the token (default TALLY_ADMIN_TOKEN)',
  },
] as const;
const tenantOption = {
  name: 'tenant',
  value: 'text',
  placeholder: 'TENANT',
  help: 'the tenant, for a policy whose key has no tenant dim',
} as const;
const target = [
  { name: 'POLICY', value: 'text' },
  { name: 'KEY', value: 'text' },
] as const;

/** Every `tally` command: the parser reads these specs, `tally help` prints them. */
export const COMMANDS: readonly Command[] = [
  {
    path: ['policy', 'check'],
    positionals: [{ name: 'FILE', value: 'text' }],
    options: [],
    summary: 'validate a policy file; every error with its path (exit 1 when invalid)',
    exit1: 'the policy file is invalid (every error is listed)',
    run: policyCheck,
  },
  {
    path: ['policy', 'import-envoy'],
    positionals: [{ name: 'PATH', value: 'text' }],
    options: [
      {
        name: 'out',
        value: 'text',
        placeholder: 'FILE',
        help: 'write the policy file here (default stdout)',
      },
    ],
    summary:
      'convert an envoyproxy/ratelimit config (one YAML document per domain) into a policy file; what cannot be mapped on stderr',
    exit1: 'the input is invalid, or nothing of it could be mapped (every reason is listed)',
    run: policyImportEnvoy,
  },
  {
    path: ['tokens', 'hash'],
    positionals: [],
    options: [
      { name: 'name', value: 'text', placeholder: 'NAME', help: 'token name (logs); prints a whole entry' },
      { name: 'roles', value: 'text', placeholder: 'decide,query|admin', help: 'roles of the entry' },
      {
        name: 'tenants',
        value: 'text',
        placeholder: 'T1,T2',
        help: 'tenant allow-list (default every tenant)',
      },
    ],
    summary:
      'read a token on stdin, print its SHA-256 for TALLY_TOKENS_FILE (with --name/--roles: the entry)',
    exit1: 'the token or the entry cannot be made (e.g. an empty token on stdin)',
    run: tokensHash,
  },
  {
    path: ['tokens', 'check'],
    positionals: [{ name: 'FILE', value: 'text' }],
    options: [],
    summary: 'validate a tokens file; every error with its path (exit 1 when invalid)',
    exit1: 'the tokens file is invalid (every error is listed)',
    run: tokensCheck,
  },
  {
    path: ['overrides', 'list'],
    positionals: [],
    options: [
      { name: 'policy', value: 'text', placeholder: 'POLICY', help: 'only this policy' },
      { name: 'tenant', value: 'text', placeholder: 'TENANT', help: 'only this tenant' },
      ...api,
    ],
    summary: 'runtime overrides in force (every page of GET /v1/overrides)',
    exit1: 'the API refused (every field error is listed) or could not be reached',
    run: overridesList,
  },
  {
    path: ['overrides', 'get'],
    positionals: [...target],
    options: [tenantOption, ...api],
    summary: 'one override in force (KEY as the policy builds it; - for key: [])',
    exit1: 'no override in force for it, or the API refused or could not be reached',
    run: overridesGet,
  },
  {
    path: ['overrides', 'set'],
    positionals: [...target],
    options: [
      {
        name: 'limits',
        value: 'text',
        placeholder: 'W=N,…',
        required: true,
        help: 'window limits; 0 blocks the key',
      },
      { name: 'reason', value: 'text', placeholder: 'TEXT', required: true, help: 'why (recorded)' },
      { name: 'expires', value: 'time', placeholder: 'TIME', help: 'when it ends (default: when removed)' },
      tenantOption,
      ...api,
    ],
    summary: "set one policy's limits for one key at runtime; takes effect on the next decision",
    exit1: 'the API refused (every field error is listed) or could not be reached',
    run: overridesSet,
  },
  {
    path: ['overrides', 'rm'],
    positionals: [...target],
    options: [tenantOption, ...api],
    summary: "remove an override: the policy's limits apply again",
    exit1: 'no override in force for it, or the API refused or could not be reached',
    run: overridesRemove,
  },
  {
    path: ['consumers', 'status'],
    positionals: [],
    options: [group, topic],
    summary: 'members, assigned partitions, committed and stored offsets, lag',
    exit1: 'Kafka or Redis unreachable, or another failure',
    run: consumersStatusCommand,
  },
  {
    path: ['consumers', 'reset'],
    positionals: [],
    options: [
      {
        name: 'to',
        value: 'reset',
        placeholder: 'earliest|latest|TIME',
        required: true,
        help: 'where the group resumes',
      },
      group,
      topic,
    ],
    summary: "move a stopped group's offsets (and the projector's stored ones); refuses while members run",
    exit1: 'the reset was refused (members still run) or failed (Kafka or Redis unreachable)',
    run: consumersResetCommand,
  },
  {
    path: ['simulate'],
    positionals: [],
    options: [
      { name: 'policies', value: 'text', placeholder: 'FILE', required: true, help: 'proposed policy file' },
      { name: 'from', value: 'time', placeholder: 'TIME', required: true, help: 'start of the range' },
      {
        name: 'to',
        value: 'time',
        placeholder: 'TIME',
        required: true,
        help: 'end of the range (exclusive)',
      },
      { name: 'tenant', value: 'text', placeholder: 'TENANT', help: 'only this tenant' },
      {
        name: 'overrides',
        value: 'text',
        placeholder: 'FILE',
        help: 'proposed runtime overrides (the output of tally overrides list --json, or a list)',
      },
    ],
    summary:
      'recorded decisions re-evaluated under proposed policies: allowed/denied per policy, actual vs proposed',
    exit1: 'the ledger could not be read (Kafka unreachable) or another failure',
    run: simulateCommand,
  },
  {
    path: ['reseed'],
    positionals: [],
    options: [
      { name: 'policy', value: 'text', placeholder: 'POLICY', help: 'only this policy' },
      {
        name: 'from',
        value: 'time',
        placeholder: 'TIME',
        help: 'read the ledger from here (default: oldest current window)',
      },
      {
        name: 'policies',
        value: 'text',
        placeholder: 'FILE',
        help: 'policy file in force (default TALLY_POLICIES)',
      },
    ],
    summary: 'after a Redis loss, rebuild sustained counters (≥ 1h, calendar months) from the usage ledger',
    exit1: 'the reseed failed (Kafka or Redis unreachable)',
    run: reseedCommand,
  },
  {
    path: ['replay'],
    positionals: [],
    options: [
      {
        name: 'from',
        value: 'start',
        placeholder: 'TIME|earliest',
        required: true,
        help: 'first record published at or after',
      },
      {
        name: 'to',
        value: 'end',
        placeholder: 'TIME|latest',
        required: true,
        help: 'stop before records published at or after (latest: the end seen at start)',
      },
      {
        name: 'namespace',
        value: 'namespace',
        placeholder: 'NS',
        required: true,
        help: 'fresh namespace to build',
      },
      { name: 'force', help: 'replace an existing (inactive) namespace' },
      {
        name: 'workers',
        value: 'workers',
        placeholder: 'N',
        help: 'worker processes, each replaying the partitions of its shards (default 1: this process)',
      },
    ],
    summary: 'rebuild projections from the ledger into a fresh namespace (progress, rate and ETA on stderr)',
    exit1: 'the replay failed (Kafka or Redis unreachable)',
    run: replayCommand,
  },
  {
    path: ['projections', 'list'],
    positionals: [],
    options: [],
    summary: 'namespaces, the active one, events and last update',
    exit1: 'Redis unreachable, or another failure',
    run: projectionsList,
  },
  {
    path: ['projections', 'switch'],
    positionals: [{ name: 'NAMESPACE', value: 'namespace' }],
    options: [{ name: 'force', help: 'switch to a namespace whose replay did not complete' }],
    summary: 'make a namespace the active one (queries and the projector follow)',
    exit1: 'no such namespace, its replay is incomplete (without --force), or Redis unreachable',
    run: projectionsSwitch,
  },
  {
    path: ['projections', 'drop'],
    positionals: [{ name: 'NAMESPACE', value: 'namespace' }],
    options: [],
    summary: 'delete an inactive namespace',
    exit1: 'no such namespace, it is the active one, or Redis unreachable',
    run: projectionsDrop,
  },
  {
    path: ['reconcile'],
    positionals: [
      { name: 'NS_A', value: 'namespace', optional: true },
      { name: 'NS_B', value: 'namespace', optional: true },
    ],
    options: [
      { name: 'from', value: 'time', placeholder: 'TIME', help: 'only buckets starting at or after' },
      { name: 'to', value: 'time', placeholder: 'TIME', help: 'only buckets ending at or before' },
      {
        name: 'granularity',
        value: 'text',
        placeholder: 'minute|hour|day|month',
        help: 'only this bucket size',
      },
      {
        name: 'enforcement',
        help: 'instead: compare the projection with the enforcement counters of the current buckets',
      },
      {
        name: 'namespace',
        value: 'namespace',
        placeholder: 'NS',
        help: 'with --enforcement: this namespace (default the active one)',
      },
      { name: 'tenant', value: 'text', placeholder: 'TENANT', help: 'with --enforcement: only this tenant' },
      { name: 'policy', value: 'text', placeholder: 'POLICY', help: 'with --enforcement: only this policy' },
      {
        name: 'policies',
        value: 'text',
        placeholder: 'FILE',
        help: 'with --enforcement: policy file in force (default TALLY_POLICIES)',
      },
      {
        name: 'strict',
        help: 'with --enforcement: differences explainable by degraded or would-deny decisions fail too',
      },
    ],
    summary:
      'differences per tenant / policy / bucket between two namespaces, or per key between the projection and the counters (exit 1 when any)',
    exit1: 'differences were found (or, with --enforcement, differences that fail), or a failure',
    run: reconcileCommand,
  },
  {
    path: ['bench'],
    positionals: [{ name: 'BENCH', value: 'text', optional: true, choices: BENCHES }],
    options: [{ name: 'no-build', help: 'reuse dist/ as it is (default: build first)' }],
    summary:
      "run the repository's benchmarks (scripts/bench.mjs; both when none is named); --json: their reports",
    exit1: "the benchmark failed: bench exits with the benchmark script's own code",
    run: benchCommand,
  },
];
