/**
 * The three sides of the ledger invariant after draining: what the callers were allowed (client),
 * the `tally.usage.v1` events in Kafka (read from the beginning by a group of this check alone), and
 * the projector's usage totals per tenant over its query API.
 */
import { TOPICS, type Ledger } from '@tally/ledger';
import { eventually, PublishedContracts, uniqueName } from '@tally/testing';
import type { ClientRecord } from './ledger-client.record';

export interface KafkaUsage {
  /** Every usage event of the wanted tenants, duplicates included, by id. */
  readonly values: ReadonlyMap<string, readonly string[]>;
  readonly events: number;
  /** How each wanted event departs from the JSON Schema published in docs/contracts/ (none, we assert). */
  readonly violations: readonly string[];
}

/** Reads the usage topic from the beginning up to its current high watermarks. */
export async function readUsage(ledger: Ledger, tenants: ReadonlySet<string>): Promise<KafkaUsage> {
  const high = new Map<number, bigint>();
  for (const p of await ledger.admin.fetchTopicOffsets(TOPICS.usage)) high.set(p.partition, BigInt(p.high));
  const next = new Map<number, bigint>();
  const values = new Map<string, string[]>();
  const violations: string[] = [];
  const contracts = new PublishedContracts();
  let events = 0;
  const consumer = ledger.consumers.create({
    groupId: uniqueName('ledger-e2e-reader'),
    topics: [TOPICS.usage],
    fromBeginning: true,
    maxWaitTimeMs: 100,
  });
  await consumer.run((batch) => {
    for (const record of batch.records) {
      next.set(batch.partition, BigInt(record.offset) + 1n);
      const value = String(record.value);
      const event = JSON.parse(value) as { id: string; data: { tenant?: string } };
      if (event.data.tenant === undefined || !tenants.has(event.data.tenant)) continue;
      events++;
      violations.push(...contracts.eventProblems(value, record.headers));
      values.set(event.id, [...(values.get(event.id) ?? []), value]);
    }
    return Promise.resolve();
  });
  const done = (): boolean => [...high].every(([p, h]) => h === 0n || (next.get(p) ?? 0n) >= h);
  await eventually(done, (ok) => ok, {
    timeoutMs: 60_000,
    intervalMs: 50,
    what: 'the usage topic to be read to its high watermark',
  });
  await consumer.disconnect();
  return { values, events, violations };
}

export interface ProjectedTotal {
  readonly cost: number;
  readonly count: number;
}

/** `GET /v1/usage?granularity=day` totals (every policy, each decision once) around today, per tenant. */
export async function projectedTotals(
  baseUrl: string,
  token: string,
  tenants: readonly string[],
): Promise<Map<string, ProjectedTotal>> {
  const day = (offset: number): string =>
    new Date(Date.now() + offset * 86_400_000).toISOString().slice(0, 10);
  const totals = new Map<string, ProjectedTotal>();
  for (const tenant of tenants) {
    const query = new URLSearchParams({ tenant, granularity: 'day', from: day(-1), to: day(2) });
    const res = await fetch(`${baseUrl}/v1/usage?${query.toString()}`, {
      headers: { authorization: `Bearer ${token}` },
    });
    const body = (await res.json()) as { total?: ProjectedTotal };
    if (res.status !== 200 || body.total === undefined) {
      throw new Error(`usage of ${tenant}: ${res.status} ${JSON.stringify(body)}`);
    }
    totals.set(tenant, { cost: body.total.cost, count: body.total.count });
  }
  return totals;
}

export interface InvariantReport {
  readonly clientIds: number;
  readonly kafkaIds: number;
  readonly kafkaEvents: number;
  /** Allowed by the API, missing from Kafka (lost). */
  readonly missing: readonly string[];
  /** In Kafka, never allowed to a caller (invented or double spent). */
  readonly unexpected: readonly string[];
  /** Ids published more than once. */
  readonly duplicates: number;
  /** Duplicates whose copies differ: not a re-publication. */
  readonly divergent: readonly string[];
  readonly client: Readonly<Record<string, ProjectedTotal>>;
  readonly projected: Readonly<Record<string, ProjectedTotal>>;
}

export function compare(
  client: ClientRecord,
  kafka: KafkaUsage,
  projected: ReadonlyMap<string, ProjectedTotal>,
): InvariantReport {
  const clientTotals = client.totals();
  const tenants = [...projected.keys()];
  return {
    clientIds: client.allowed.size,
    kafkaIds: kafka.values.size,
    kafkaEvents: kafka.events,
    missing: [...client.allowed.keys()].filter((id) => !kafka.values.has(id)),
    unexpected: [...kafka.values.keys()].filter((id) => !client.allowed.has(id)),
    duplicates: [...kafka.values.values()].filter((v) => v.length > 1).length,
    divergent: [...kafka.values].filter(([, v]) => v.some((x) => x !== v[0])).map(([id]) => id),
    client: Object.fromEntries(tenants.map((t) => [t, clientTotals.get(t) ?? { cost: 0, count: 0 }])),
    projected: Object.fromEntries(projected),
  };
}
