/**
 * Shared by the projector suites (each also runs a PrivateRedis of @tally/testing, so other engineers'
 * keys on the shared Redis are never touched): events built from synthetic outbox entries
 * with the @tally/events builders, topics and a group unique to the run on the shared broker, and the
 * projector app itself (in this process, or the built app as a child process).
 */
import 'reflect-metadata';
import { type NestFastifyApplication } from '@nestjs/platform-fastify';
import { loadConfig } from '@tally/config';
import {
  decisionEventFromOutbox,
  kafkaKeyOf,
  ledgerEventFromOutbox,
  usageEventFromOutbox,
  USAGE_EVENT_TYPE,
  DECISION_EVENT_TYPE,
  type DecisionEventV1,
  type DecisionEventV2,
  type OutboxPayload,
  type OutboxPolicy,
  type UsageEventV1,
} from '@tally/events';
import { createHttpApp, httpAppOptions } from '@tally/http';
import { createLedger, type Ledger, type TopicSpec } from '@tally/ledger';
import { createLogger } from '@tally/observability';
import { eventually, uniqueName } from '@tally/testing';
import { ulid } from 'ulid';
import { ProjectorModule, type ProjectorOverrides } from '../../apps/projector/src/projector.module';

export const CALLER_TOKEN = 'projector-caller-token-0123456789';
export const ADMIN_TOKEN = 'projector-admin-token-0123456789';
const TOKEN_SECRET = 'projector-token-secret-0123456789';

/** How the projector suites poll for a projection to settle: Kafka and the fold take seconds. */
export const PROJECTOR_POLL = { timeoutMs: 45_000, intervalMs: 250 } as const;

/** Topics and a group that only this run uses, on the shared broker. */
export class RunTopics {
  readonly groupId: string;
  readonly topics: { usage: string; decision: string; decisionV1: string; deadLetter: string };
  readonly ledger: Ledger;

  constructor(
    brokers: readonly string[],
    prefix: string,
    private readonly partitions = 3,
  ) {
    const run = uniqueName(prefix);
    this.groupId = `${run}-group`;
    this.topics = {
      usage: `${run}.usage`,
      decision: `${run}.decision`,
      decisionV1: `${run}.decision-v1`,
      deadLetter: `${run}.dlq`,
    };
    this.ledger = createLedger({ brokers, clientId: run, logLevel: 'nothing' });
  }

  get specs(): TopicSpec[] {
    return Object.values(this.topics).map((topic) => ({
      topic,
      partitions: this.partitions,
      replicationFactor: 1,
    }));
  }

  get overrides(): ProjectorOverrides {
    return { groupId: this.groupId, topics: this.topics, topicSpecs: this.specs, lagPollMs: 1_000 };
  }

  async create(): Promise<void> {
    await this.ledger.provisioner.ensureTopics(this.specs);
  }

  /** Each event on its topic: usage, `tally.decision.v1` on the first contract's decision topic, the rest on the decision topic. */
  async produce(events: readonly (UsageEventV1 | DecisionEventV1 | DecisionEventV2)[]): Promise<void> {
    const topicOf = (e: (typeof events)[number]) =>
      e.type === USAGE_EVENT_TYPE
        ? this.topics.usage
        : e.type === DECISION_EVENT_TYPE
          ? this.topics.decisionV1
          : this.topics.decision;
    const byTopic = new Map<string, { key: string; value: string }[]>();
    for (const e of events) {
      const list = byTopic.get(topicOf(e)) ?? [];
      list.push({ key: kafkaKeyOf(e), value: JSON.stringify(e) });
      byTopic.set(topicOf(e), list);
    }
    await this.ledger.producer.sendBatch([...byTopic].map(([topic, messages]) => ({ topic, messages })));
  }

  /** Every record of `topic` from its start, once at least `count` have arrived (a reader group of its own). */
  async readAll(topic: string, count: number): Promise<ReadRecord[]> {
    const consumer = this.ledger.consumers.create({
      groupId: uniqueName(`${this.groupId}-reader`),
      topics: [topic],
      fromBeginning: true,
      autoCommit: false,
    });
    const got: ReadRecord[] = [];
    await consumer.run(async (batch) => {
      for (const r of batch.records)
        got.push({ offset: r.offset, value: r.value?.toString() ?? '', headers: { ...r.headers } });
      await Promise.resolve();
    });
    try {
      await eventually(
        () => got.length,
        (n) => n >= count,
        { ...PROJECTOR_POLL, what: `${count} records on ${topic}` },
      );
      return got;
    } finally {
      await consumer.disconnect();
    }
  }

  async close(): Promise<void> {
    await this.ledger.admin.deleteTopics(Object.values(this.topics)).catch(() => undefined);
    await this.ledger.close();
  }
}

export interface ReadRecord {
  readonly offset: string;
  readonly value: string;
  readonly headers: Record<string, string>;
}

export interface Decision {
  readonly tenant?: string;
  readonly cost: number;
  readonly timeMs: number;
  readonly policies?: readonly OutboxPolicy[];
  readonly outcome?: OutboxPayload['outcome'];
  readonly reason?: OutboxPayload['reason'];
  readonly id?: string;
  readonly policySetVersion?: string;
  /** Window results where every window of a shadow policy would have denied (none: no results). */
  readonly shadowWouldDeny?: boolean;
  readonly degradedCause?: string;
}

/**
 * The one record the relay publishes for a decision: its usage event when allowed or degraded with
 * a cost, its `tally.decision.v2` event when denied; none for cost 0 (the engine writes no entry).
 */
export function eventsOf(decision: Decision): (UsageEventV1 | DecisionEventV2)[] {
  const entry = entryOf(decision);
  if (decision.cost === 0 && decision.outcome !== 'denied') return [];
  return [ledgerEventFromOutbox(entry)];
}

/** The events relays of the first contract published for a decision: usage and its tally.decision.v1 twin. */
export function eventsOfV1(decision: Decision): (UsageEventV1 | DecisionEventV1)[] {
  const entry = entryOf(decision);
  const usage = usageEventFromOutbox(entry);
  return usage === null ? [decisionEventFromOutbox(entry)] : [usage, decisionEventFromOutbox(entry)];
}

function entryOf(decision: Decision): { p: string; t: string; r: string } {
  const payload: OutboxPayload = {
    v: 1,
    id: decision.id ?? ulid(decision.timeMs),
    policy_set_version: decision.policySetVersion ?? 'v-test',
    ...(decision.tenant === undefined ? {} : { tenant: decision.tenant }),
    selectors: { ...(decision.tenant === undefined ? {} : { tenant: decision.tenant }), principal: 'svc' },
    attributes: {},
    cost: decision.cost,
    outcome: decision.outcome ?? 'allowed',
    ...(decision.reason === undefined ? {} : { reason: decision.reason }),
    ...(decision.degradedCause === undefined ? {} : { degraded_cause: decision.degradedCause }),
    policies: decision.policies ?? [{ name: 'p1', mode: 'enforce', key: 'svc', windows: [] }],
  };
  const results = payload.policies.flatMap((policy) =>
    policy.windows.map(() => ({ remaining: 0, reset_ms: 1000, would_deny: policy.mode === 'shadow' })),
  );
  const r = decision.shadowWouldDeny === true ? JSON.stringify(results) : '[]';
  return { p: JSON.stringify(payload), t: String(decision.timeMs), r };
}

export interface HttpResult<T = Record<string, unknown>> {
  readonly status: number;
  readonly body: T;
}

export async function getJson<T = Record<string, unknown>>(
  baseUrl: string,
  path: string,
  token: string | null = CALLER_TOKEN,
): Promise<HttpResult<T>> {
  const headers: Record<string, string> = token === null ? {} : { authorization: `Bearer ${token}` };
  const response = await fetch(`${baseUrl}${path}`, { headers });
  const text = await response.text();
  const json = (response.headers.get('content-type') ?? '').includes('json');
  return { status: response.status, body: (json ? JSON.parse(text) : text) as T };
}

/** The settings every projector of these suites runs with (tokens, its Redis, the shared broker). */
export function projectorEnv(redisUrl: string, brokers: readonly string[]): Record<string, string> {
  return {
    REDIS_URL: redisUrl,
    KAFKA_BROKERS: brokers.join(','),
    TALLY_API_TOKENS: CALLER_TOKEN,
    TALLY_ADMIN_TOKEN: ADMIN_TOKEN,
    TALLY_TOKEN_SECRET: TOKEN_SECRET,
    TALLY_LOG_LEVEL: 'error',
  };
}

/** The projector app in this process, exactly as main.ts wires it, on an ephemeral port. */
export class InProcessProjector {
  private constructor(
    private readonly app: NestFastifyApplication,
    readonly baseUrl: string,
  ) {}

  static async start(
    redisUrl: string,
    brokers: readonly string[],
    overrides: ProjectorOverrides,
    /** Extra `TALLY_*` settings (a tokens file, …). */
    env: Readonly<Record<string, string>> = {},
  ): Promise<InProcessProjector> {
    const config = loadConfig({ ...projectorEnv(redisUrl, brokers), ...env });
    const app = await createHttpApp(
      ProjectorModule.forRoot(config, overrides),
      httpAppOptions(config, createLogger('projector-it', config.logLevel)),
    );
    await app.listen({ port: 0, host: '127.0.0.1' });
    const address = app.getHttpServer().address();
    if (address === null || typeof address === 'string') throw new Error('no TCP address');
    const projector = new InProcessProjector(app, `http://127.0.0.1:${address.port}`);
    // The member joins in the background; before that the namespace may not exist yet (a query
    // answers 404), so a suite on a busy machine would race it.
    await eventually(
      () => projector.get<{ components?: { consumer?: { status?: string } } }>('/readyz', null),
      (res) => res.body.components?.consumer?.status === 'up',
      // Longer than the provisioner's own 60 s deadline for new topics to be served: on a busy broker
      // a slow join then still passes, and a broker that never serves them fails with its reason.
      { timeoutMs: 120_000, intervalMs: 250, what: 'the projector to join its group' },
    );
    return projector;
  }

  get<T = Record<string, unknown>>(path: string, token?: string | null): Promise<HttpResult<T>> {
    return getJson<T>(this.baseUrl, path, token);
  }

  /** A Prometheus sample's value (summed over label sets matching `labels`). */
  async metric(name: string, labels = ''): Promise<number> {
    const { body } = await getJson<string>(this.baseUrl, '/metrics', null);
    let sum = 0;
    for (const line of body.split('\n')) {
      if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
      if (labels !== '' && !line.includes(labels)) continue;
      sum += Number(line.slice(line.lastIndexOf(' ') + 1));
    }
    return sum;
  }

  /** Graceful stop: the batch in flight finishes, the member leaves the group. */
  async stop(): Promise<void> {
    await this.app.close();
  }
}
